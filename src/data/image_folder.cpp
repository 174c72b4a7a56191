#include "ember/data/image_folder.hpp"

#include <stb_image.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <system_error>

#include "ember/core/error.hpp"

namespace ember::data {

namespace {

/// A FILE* as stb_image's input, noting whether a decoder asked to read past the end.
struct Reader {
  std::FILE* file;
  bool past_end;
};

int reader_read(void* user, char* data, int size) {
  auto* r = static_cast<Reader*>(user);
  const auto n = std::fread(data, 1, static_cast<std::size_t>(size), r->file);
  if (n == 0 && size > 0) r->past_end = true;
  return static_cast<int>(n);
}

void reader_skip(void* user, int n) {
  auto* r = static_cast<Reader*>(user);
  std::fseek(r->file, n, SEEK_CUR);
  // fgetc clears feof()'s flag after a seek back; the byte is pushed back.
  const int ch = std::fgetc(r->file);
  if (ch != EOF) std::ungetc(ch, r->file);
}

int reader_eof(void* user) {
  auto* r = static_cast<Reader*>(user);
  return std::feof(r->file) || std::ferror(r->file);
}

constexpr stbi_io_callbacks kReaderCallbacks{reader_read, reader_skip, reader_eof};

}  // namespace

ImageU8 read_image(const std::filesystem::path& path, int channels) {
  if (channels < 0 || channels > 4) {
    ember::detail::fail<ValueError>("read_image", "channels must be 0..4, got ", channels);
  }
  // stbi_load's failure reasons are process-wide; open the file ourselves so a missing file
  // is reported with errno's reason.
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    ember::detail::fail<IoError>("read_image", path.string(), ": cannot open (",
                                 std::strerror(errno), ")");
  }
  // stb's decoders read zeros past the end of a file (a BMP or TGA with only its header, a
  // JPEG cut short decode to black or grey without an error). Reading through our own
  // callbacks shows when a decoder asked for bytes the file does not have.
  Reader reader{f, false};
  int w = 0, h = 0, file_channels = 0;
  stbi_uc* pixels =
      stbi_load_from_callbacks(&kReaderCallbacks, &reader, &w, &h, &file_channels, channels);
  std::fclose(f);
  if (!pixels) {
    const char* reason = stbi_failure_reason();
    ember::detail::fail<IoError>("read_image", path.string(), ": cannot decode (",
                                 reason ? reason : "unknown format", ")");
  }
  std::unique_ptr<stbi_uc, void (*)(void*)> owner(pixels, stbi_image_free);
  if (reader.past_end) {
    ember::detail::fail<IoError>("read_image", path.string(),
                                 ": truncated (the image data ends before its ", w, "x", h,
                                 " pixels do)");
  }
  const auto c = static_cast<std::size_t>(channels == 0 ? file_channels : channels);
  const auto hh = static_cast<std::size_t>(h), ww = static_cast<std::size_t>(w);
  ImageU8 image(c, hh, ww);
  // stb gives interleaved [H, W, C]; Image is planar [C, H, W].
  for (std::size_t y = 0; y < hh; ++y) {
    for (std::size_t x = 0; x < ww; ++x) {
      const stbi_uc* px = pixels + (y * ww + x) * c;
      for (std::size_t ch = 0; ch < c; ++ch) image.at(ch, y, x) = px[ch];
    }
  }
  return image;
}

void write_png(const std::filesystem::path& path, const ImageU8& image) {
  if (image.channels < 1 || image.channels > 4 || image.height == 0 || image.width == 0 ||
      image.pixels.size() != image.numel()) {
    ember::detail::fail<ShapeError>("write_png", "cannot write an image of shape [", image.channels,
                                    ", ", image.height, ", ", image.width,
                                    "] as PNG (1 to 4 channels, non-empty)");
  }
  std::vector<unsigned char> interleaved(image.numel());
  for (std::size_t y = 0; y < image.height; ++y) {
    for (std::size_t x = 0; x < image.width; ++x) {
      for (std::size_t c = 0; c < image.channels; ++c) {
        interleaved[(y * image.width + x) * image.channels + c] = image.at(c, y, x);
      }
    }
  }
  const int w = static_cast<int>(image.width), h = static_cast<int>(image.height);
  const int c = static_cast<int>(image.channels);
  if (!stbi_write_png(path.c_str(), w, h, c, interleaved.data(), w * c)) {
    ember::detail::fail<IoError>("write_png", path.string(), ": cannot write");
  }
}

namespace {
std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}
}  // namespace

ImageFolderDataset::ImageFolderDataset(const std::filesystem::path& root,
                                       ImageFolderOptions options)
    : options_(std::move(options)) {
  namespace fs = std::filesystem;
  if (options_.channels != 0 && options_.channels != 1 && options_.channels != 3) {
    ember::detail::fail<ValueError>("image_folder", "channels must be 0, 1 or 3, got ",
                                    options_.channels);
  }
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    ember::detail::fail<IoError>("image_folder", root.string(), ": not a directory");
  }
  std::vector<fs::path> class_dirs;
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
    if (e.is_directory(ec)) class_dirs.push_back(e.path());
  }
  if (ec) ember::detail::fail<IoError>("image_folder", root.string(), ": ", ec.message());
  std::sort(class_dirs.begin(), class_dirs.end());
  for (const fs::path& dir : class_dirs) {
    std::vector<fs::path> images;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      const std::string ext = lower(it->path().extension().string());
      if (std::find(options_.extensions.begin(), options_.extensions.end(), ext) !=
          options_.extensions.end()) {
        images.push_back(it->path());
      }
    }
    if (ec) ember::detail::fail<IoError>("image_folder", dir.string(), ": ", ec.message());
    std::sort(images.begin(), images.end());
    const auto label = static_cast<std::int64_t>(classes_.size());
    classes_.push_back(dir.filename().string());
    for (fs::path& p : images) {
      files_.push_back(std::move(p));
      labels_.push_back(label);
    }
  }
  if (files_.empty()) {
    ember::detail::fail<IoError>("image_folder", root.string(),
                                 ": no images (expected root/<class>/<image> with extensions ",
                                 options_.extensions.empty() ? "(none)" : options_.extensions[0],
                                 options_.extensions.size() > 1 ? ", ..." : "", ")");
  }
}

std::optional<ImageU8> ImageFolderDataset::get(std::size_t index) const {
  if (index >= files_.size()) return std::nullopt;
  ImageU8 image = read_image(files_[index], options_.channels);
  image.label = labels_[index];
  return image;
}

}  // namespace ember::data
