// Images: transforms against hand-computed values, PNG/JPEG decoding through libstb, the
// image-folder dataset, and the image batcher (alone and inside a DataLoader on Dispatch).
#include <gtest/gtest.h>
#include <stb_image_write.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <set>
#include <string>

#include "ember/data/batcher.hpp"
#include "ember/data/image.hpp"
#include "ember/data/image_folder.hpp"
#include "ember/data/loader.hpp"
#include "ember/data/mnist.hpp"

using namespace ember;
using namespace ember::data;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

template <class E, class Fn>
std::string error_of(Fn&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

/// 1 x 3 x 3 image with pixels 1..9 row by row.
ImageU8 three_by_three(std::int64_t label = 4) {
  return ImageU8(1, 3, 3, std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}, label);
}

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("ember_data_img_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

/// Writes an interleaved [h, w, c] PNG with stb_image_write.
void write_png_raw(const fs::path& path, int w, int h, int c,
                   const std::vector<unsigned char>& px) {
  fs::create_directories(path.parent_path());
  ASSERT_NE(stbi_write_png(path.c_str(), w, h, c, px.data(), w * c), 0) << path;
}

}  // namespace

TEST(Image, ConstructorChecksSize) {
  EXPECT_EQ(error_of<ShapeError>([] {
              ImageU8(1, 2, 2, std::vector<std::uint8_t>{1, 2, 3});
            }),
            "[image] 3 pixel values do not fill shape [1, 2, 2]");
  ImageF32 im(2, 1, 2, 3);
  EXPECT_EQ(im.numel(), 4u);
  EXPECT_EQ(im.label, 3);
}

TEST(Transforms, ToFloatAndNormalize) {
  ImageU8 im(2, 1, 2, std::vector<std::uint8_t>{0, 255, 51, 102});
  ImageF32 f = to_float(im);
  EXPECT_FLOAT_EQ(f.pixels[1], 1.0f);
  EXPECT_FLOAT_EQ(f.pixels[2], 0.2f);
  // Channel 0: (x - 0.5) / 0.25; channel 1: (x - 0.1) / 0.5.
  Normalize norm{{0.5f, 0.1f}, {0.25f, 0.5f}};
  ImageF32 n = norm(im);
  EXPECT_FLOAT_EQ(n.pixels[0], -2.0f);
  EXPECT_FLOAT_EQ(n.pixels[1], 2.0f);
  EXPECT_FLOAT_EQ(n.pixels[2], 0.2f);  // (0.2 - 0.1) / 0.5
  EXPECT_FLOAT_EQ(n.pixels[3], 0.6f);  // (0.4 - 0.1) / 0.5
  // One value for every channel; float input as it is.
  ImageF32 g = Normalize{{1.0f}, {2.0f}}(ImageF32(2, 1, 1, std::vector<float>{3.0f, -1.0f}));
  EXPECT_FLOAT_EQ(g.pixels[0], 1.0f);
  EXPECT_FLOAT_EQ(g.pixels[1], -1.0f);
  EXPECT_EQ(error_of<ValueError>([&] {
              Normalize{{0.1f, 0.2f, 0.3f}, {1, 1, 1}}(im);
            }),
            "[normalize] 3 mean/std values for an image of 2 channels");
  EXPECT_EQ(error_of<ValueError>([&] {
              Normalize{{0.1f}, {0.0f}}(im);
            }),
            "[normalize] std 0 is not > 0");
  EXPECT_NE(error_of<ValueError>([&] { Normalize{{0.1f}, {}}(im); }), "");
}

TEST(Transforms, CropWithPaddingAndFlip) {
  const ImageU8 im = three_by_three();
  // Padded by 1 (5x5 with a zero border); the 3x3 window at (0, 0) sees the border.
  ImageU8 c = crop(im, 0, 0, 3, 3, 1);
  EXPECT_EQ(c.pixels, (std::vector<std::uint8_t>{0, 0, 0, 0, 1, 2, 0, 4, 5}));
  EXPECT_EQ(c.label, 4);
  EXPECT_EQ(crop(im, 2, 1, 2, 2, 1).pixels, (std::vector<std::uint8_t>{4, 5, 7, 8}));
  EXPECT_EQ(crop(im, 2, 2, 3, 3, 1).pixels, (std::vector<std::uint8_t>{5, 6, 0, 8, 9, 0, 0, 0, 0}));
  EXPECT_EQ(crop(im, 0, 0, 1, 5, 1).pixels, (std::vector<std::uint8_t>{0, 0, 0, 0, 0}));
  EXPECT_EQ(crop(im, 1, 0, 1, 5, 1).pixels, (std::vector<std::uint8_t>{0, 1, 2, 3, 0}));
  EXPECT_EQ(crop(im, 1, 4, 3, 1, 1).pixels, (std::vector<std::uint8_t>{0, 0, 0}));
  EXPECT_EQ(crop(im, 1, 1, 3, 3, 1).pixels, im.pixels);  // the centre is the image
  EXPECT_EQ(crop(im, 0, 1, 1, 2).pixels, (std::vector<std::uint8_t>{2, 3}));
  EXPECT_EQ(error_of<ShapeError>([&] { crop(im, 1, 0, 3, 3); }),
            "[crop] window [3, 3] at (1, 0) does not fit in image [1, 3, 3] padded by 0");
  EXPECT_EQ(flip_horizontal(im).pixels, (std::vector<std::uint8_t>{3, 2, 1, 6, 5, 4, 9, 8, 7}));
  ImageF32 two(2, 1, 2, std::vector<float>{1, 2, 3, 4});
  EXPECT_EQ(flip_horizontal(two).pixels, (std::vector<float>{2, 1, 4, 3}));
}

TEST(Transforms, RandomCropAndFlipFollowTheGenerator) {
  const ImageU8 im = three_by_three();
  RandomCrop rc{3, 3, 1};
  std::set<std::vector<std::uint8_t>> seen;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    Rng rng(seed), replay(seed);
    ImageU8 out = rc(im, rng);
    // The documented draws: top then left, each uniform in [0, 5 - 3].
    const auto top = replay.below(3);
    const auto left = replay.below(3);
    EXPECT_EQ(out.pixels, crop(im, top, left, 3, 3, 1).pixels);
    seen.insert(out.pixels);
  }
  EXPECT_EQ(seen.size(), 9u);  // all 3 x 3 offsets occur
  EXPECT_EQ(error_of<ShapeError>([&] {
              Rng rng(0);
              RandomCrop{6, 3, 1}(im, rng);
            }),
            "[random_crop] crop [6, 3] is larger than image [3, 3] padded by 1");

  int flipped = 0;
  for (std::uint64_t seed = 0; seed < 1000; ++seed) {
    Rng rng(seed), replay(seed);
    ImageU8 out = HorizontalFlip{0.3}(im, rng);
    const bool expect_flip = replay.uniform() < 0.3;
    EXPECT_EQ(out.pixels, expect_flip ? flip_horizontal(im).pixels : im.pixels);
    flipped += expect_flip;
  }
  EXPECT_NEAR(flipped, 300, 60);
  Rng rng(1);
  EXPECT_EQ(HorizontalFlip{0.0}(im, rng).pixels, im.pixels);
  EXPECT_EQ(HorizontalFlip{1.0}(im, rng).pixels, flip_horizontal(im).pixels);
}

TEST(ImageFiles, PngRoundTripAndErrors) {
  TempDir dir;
  // A 2x3 RGB image written with stb_image_write, read back planar.
  const std::vector<unsigned char> rgb = {10, 20, 30, 40, 50, 60, 70, 80, 90,
                                          1,  2,  3,  4,  5,  6,  7,  8,  9};
  write_png_raw(dir / "rgb.png", 3, 2, 3, rgb);
  ImageU8 im = read_image(dir / "rgb.png");
  ASSERT_EQ(im.channels, 3u);
  ASSERT_EQ(im.height, 2u);
  ASSERT_EQ(im.width, 3u);
  EXPECT_EQ(im.at(0, 0, 0), 10);
  EXPECT_EQ(im.at(1, 0, 0), 20);
  EXPECT_EQ(im.at(2, 0, 2), 90);
  EXPECT_EQ(im.at(0, 1, 1), 4);
  EXPECT_EQ(im.at(2, 1, 2), 9);
  // Converted to gray by stb: (77 r + 150 g + 29 b) >> 8.
  ImageU8 gray = read_image(dir / "rgb.png", 1);
  ASSERT_EQ(gray.channels, 1u);
  EXPECT_EQ(gray.at(0, 0, 0), (77 * 10 + 150 * 20 + 29 * 30) >> 8);
  // write_png then read_image gives the same pixels.
  write_png(dir / "again.png", im);
  EXPECT_EQ(read_image(dir / "again.png").pixels, im.pixels);
  EXPECT_TRUE(contains(error_of<IoError>([&] { read_image(dir / "none.png"); }),
                       "none.png: cannot open (No such file"));
  std::ofstream(dir / "junk.png") << "not an image";
  EXPECT_TRUE(contains(error_of<IoError>([&] { read_image(dir / "junk.png"); }),
                       "junk.png: cannot decode ("));
  EXPECT_NE(error_of<ShapeError>([&] { write_png(dir / "x.png", ImageU8(5, 1, 1)); }), "");
}

TEST(ImageFiles, JpegDecodes) {
  TempDir dir;
  std::vector<unsigned char> px(8 * 8 * 3, 200);
  ASSERT_NE(stbi_write_jpg((dir / "a.jpg").c_str(), 8, 8, 3, px.data(), 95), 0);
  ImageU8 im = read_image(dir / "a.jpg");
  EXPECT_EQ(im.channels, 3u);
  EXPECT_EQ(im.height, 8u);
  for (auto p : im.pixels) EXPECT_NEAR(p, 200, 3);
}

// stb decodes zeros past the end of a BMP or a JPEG; read_image refuses such files (issue 19:
// a header-only BMP was accepted by `ember infer` as a black image).
TEST(ImageFiles, TruncatedFilesAreRefused) {
  TempDir dir;
  std::vector<unsigned char> px(4 * 3 * 3);
  for (std::size_t i = 0; i < px.size(); ++i) px[i] = static_cast<unsigned char>(7 * i);
  ASSERT_NE(stbi_write_bmp((dir / "a.bmp").c_str(), 4, 3, 3, px.data()), 0);
  const ImageU8 im = read_image(dir / "a.bmp");
  ASSERT_EQ(im.height, 3u);
  EXPECT_EQ(im.at(0, 2, 3), px[(2 * 4 + 3) * 3]);
  EXPECT_EQ(im.at(2, 1, 1), px[(1 * 4 + 1) * 3 + 2]);
  const auto cut = [&](const char* from, const char* to, std::size_t keep) {
    std::ifstream in(dir / from, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    ASSERT_GT(bytes.size(), keep);
    std::ofstream(dir / to, std::ios::binary) << bytes.substr(0, keep);
  };
  cut("a.bmp", "header.bmp", 54);  // the 54-byte header alone
  EXPECT_TRUE(contains(error_of<IoError>([&] { read_image(dir / "header.bmp"); }),
                       "header.bmp: truncated (the image data ends before its 4x3 pixels do)"));
  std::vector<unsigned char> big(64 * 64 * 3);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<unsigned char>(i * 31 % 251);
  ASSERT_NE(stbi_write_jpg((dir / "b.jpg").c_str(), 64, 64, 3, big.data(), 90), 0);
  EXPECT_EQ(read_image(dir / "b.jpg").width, 64u);
  cut("b.jpg", "half.jpg", std::filesystem::file_size(dir / "b.jpg") / 2);
  // (stb itself refuses a JPEG cut short: "expected marker"; either way an IoError.)
  const std::string half = error_of<IoError>([&] { read_image(dir / "half.jpg"); });
  EXPECT_TRUE(contains(half, "half.jpg: truncated") || contains(half, "half.jpg: cannot decode"))
      << half;
}

TEST(ImageFolder, ClassesFromSubdirectories) {
  TempDir dir;
  // cat: two 2x2 gray images, dog: one (in a nested folder) plus a file that is not an image.
  write_png_raw(dir / "cat" / "b.png", 2, 2, 1, {1, 2, 3, 4});
  write_png_raw(dir / "cat" / "a.png", 2, 2, 1, {5, 6, 7, 8});
  write_png_raw(dir / "dog" / "x" / "c.PNG", 2, 2, 1, {9, 9, 9, 9});
  std::ofstream(dir / "dog" / "notes.txt") << "skip me";
  std::ofstream(dir / "README") << "not a class";
  ImageFolderDataset ds(dir.path(), {.channels = 1});
  EXPECT_EQ(ds.classes(), (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(ds.len(), 3u);
  ImageU8 a = ds.at(0);  // cat/a.png (sorted)
  EXPECT_EQ(a.label, 0);
  EXPECT_EQ(a.pixels, (std::vector<std::uint8_t>{5, 6, 7, 8}));
  EXPECT_EQ(ds.at(1).pixels, (std::vector<std::uint8_t>{1, 2, 3, 4}));
  EXPECT_EQ(ds.at(2).label, 1);
  EXPECT_EQ(ds.path(2).filename(), "c.PNG");
  // Default: 3 channels (gray replicated).
  ImageFolderDataset rgb(dir.path());
  ImageU8 c = rgb.at(1);
  EXPECT_EQ(c.channels, 3u);
  EXPECT_EQ(c.at(2, 1, 1), 4);
  // A broken file is reported when read.
  std::ofstream(dir / "dog" / "broken.png") << "garbage";
  ImageFolderDataset with_broken(dir.path(), {.channels = 1});
  EXPECT_TRUE(contains(error_of<IoError>([&] { with_broken.at(2); }), "broken.png: cannot decode"));
  EXPECT_TRUE(contains(error_of<IoError>([&] { ImageFolderDataset(dir / "cat"); }),
                       "no images (expected root/<class>/<image>"));
  EXPECT_TRUE(contains(error_of<IoError>([&] { ImageFolderDataset(dir / "missing"); }),
                       "missing: not a directory"));
  EXPECT_NE(error_of<ValueError>([&] { ImageFolderDataset(dir.path(), {.channels = 2}); }), "");
}

TEST(ImageBatcher, StacksImagesAndLabels) {
  ImageBatcher<> batcher(Device::cpu());
  std::vector<ImageU8> items = {three_by_three(2), three_by_three(7)};
  items[1].pixels[0] = 255;
  ImageBatch<> batch = batcher(items);
  EXPECT_EQ(batch.images.dims(), (std::array<std::int64_t, 4>{2, 1, 3, 3}));
  EXPECT_EQ(batch.targets.to_vec<std::int64_t>(), (std::vector<std::int64_t>{2, 7}));
  EXPECT_EQ(batch.targets.into_data().dtype(), DType::I64);
  const auto values = batch.images.to_vec<float>();
  EXPECT_FLOAT_EQ(values[0], 1.0f / 255.0f);
  EXPECT_FLOAT_EQ(values[8], 9.0f / 255.0f);
  EXPECT_FLOAT_EQ(values[9], 1.0f);
  EXPECT_EQ(batch.images.device(), Device::cpu());

  ImageBatcher<Dispatch, float> fbatcher(Device::cpu());
  auto fb = fbatcher({ImageF32(1, 1, 2, std::vector<float>{-1.5f, 2.0f}, 3)});
  EXPECT_EQ(fb.images.to_vec<float>(), (std::vector<float>{-1.5f, 2.0f}));

  EXPECT_EQ(error_of<ShapeError>([&] {
              batcher({three_by_three(), ImageU8(1, 3, 2)});
            }),
            "[image_batcher] image 1 has shape [1, 3, 2], expected [1, 3, 3] like image 0");
  EXPECT_EQ(error_of<ValueError>([&] { batcher({}); }), "[image_batcher] the batch is empty");
}

TEST(ImageBatcher, LoaderWithAugmentationOnDispatch) {
  // 20 images whose pixels all equal their index; random crop with padding and flips.
  std::vector<ImageU8> images;
  for (int i = 0; i < 20; ++i) {
    images.emplace_back(1, 4, 4, std::vector<std::uint8_t>(16, static_cast<std::uint8_t>(i + 1)),
                        i % 10);
  }
  auto ds = std::make_shared<InMemoryDataset<ImageU8>>(images);
  RandomCrop crop_t{4, 4, 2};
  HorizontalFlip flip_t{0.5};
  auto loader = DataLoaderBuilder(ImageBatcher<>(Device::cpu()))
                    .batch_size(6)
                    .shuffle(1)
                    .num_workers(2)
                    .augment([=](ImageU8 im, Rng& rng) { return flip_t(crop_t(im, rng), rng); }, 3)
                    .build(ds);
  static_assert(std::is_same_v<decltype(loader), DataLoader<ImageU8, ImageBatch<Dispatch>>>);
  std::multiset<std::int64_t> labels;
  std::size_t batches = 0;
  for (auto& batch : loader.iter(0)) {
    ++batches;
    const auto dims = batch.images.dims();
    EXPECT_EQ(dims[1], 1);
    EXPECT_EQ(dims[2], 4);
    EXPECT_EQ(dims[3], 4);
    const auto targets = batch.targets.to_vec<std::int64_t>();
    const auto px = batch.images.to_vec<float>();
    for (std::size_t n = 0; n < targets.size(); ++n) {
      labels.insert(targets[n]);
      // Each image holds its own value or the zero padding, nothing else.
      float value = 0;
      for (std::size_t j = 0; j < 16; ++j) {
        const float v = px[n * 16 + j];
        if (v != 0) {
          if (value == 0) value = v;
          EXPECT_FLOAT_EQ(v, value);
        }
      }
    }
  }
  EXPECT_EQ(batches, 4u);
  EXPECT_EQ(labels.size(), 20u);
  for (std::int64_t l = 0; l < 10; ++l) EXPECT_EQ(labels.count(l), 2u);
}

TEST(ImageBatcher, FashionMnistBatchShapes) {
  if (!fs::exists(fs::path(FashionMnist::kDefaultDir) / "t10k-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << FashionMnist::kDefaultDir
                 << " is not installed (Debian package dataset-fashion-mnist)";
  }
  auto test = FashionMnist::test(FashionMnist::kDefaultDir);
  auto loader =
      DataLoaderBuilder(ImageBatcher<>(Device::cpu())).batch_size(64).num_workers(2).build(test);
  EXPECT_EQ(loader.num_batches(), 157u);  // ceil(10000 / 64)
  auto epoch = loader.iter(0);
  auto first = epoch.next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->images.dims(), (std::array<std::int64_t, 4>{64, 1, 28, 28}));
  EXPECT_EQ(first->targets.dims(), (std::array<std::int64_t, 1>{64}));
  EXPECT_EQ(first->targets.to_vec<std::int64_t>()[0], 9);
  const auto px = first->images.to_vec<float>();
  float maxv = 0;
  for (float v : px) maxv = std::max(maxv, v);
  EXPECT_FLOAT_EQ(maxv, 1.0f);
}
