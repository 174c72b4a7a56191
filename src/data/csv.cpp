#include "ember/data/csv.hpp"

#include <csv.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "ember/core/error.hpp"

namespace ember::data {

const char* column_type_name(ColumnType type) {
  switch (type) {
    case ColumnType::Int:
      return "int";
    case ColumnType::Float:
      return "float";
    case ColumnType::String:
      return "string";
  }
  return "?";
}

std::size_t CsvSchema::index(std::string_view name) const {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return i;
  }
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  ember::detail::fail<ValueError>("csv", "no column \"", name, "\" (columns: ", list, ")");
}

const CsvSchema& CsvRecord::schema() const {
  if (!schema_) ember::detail::fail<ValueError>("csv", "the record is empty");
  return *schema_;
}

const CsvValue& CsvRecord::value(std::size_t column, const char* op) const {
  if (column >= values_.size()) {
    ember::detail::fail<ValueError>(op, "column ", column, " is out of range for a record of ",
                                    values_.size(), " columns");
  }
  return values_[column];
}

namespace {
[[noreturn]] void wrong_type(const CsvRecord& r, std::size_t column, const char* op,
                             const char* wanted) {
  ember::detail::fail<ValueError>(op, "column \"", r.schema().names[column], "\" holds ",
                                  column_type_name(r.schema().types[column]), " values, not ",
                                  wanted);
}
}  // namespace

std::int64_t CsvRecord::int_at(std::size_t column) const {
  const CsvValue& v = value(column, "csv_int");
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  wrong_type(*this, column, "csv_int", "int");
}

double CsvRecord::float_at(std::size_t column) const {
  const CsvValue& v = value(column, "csv_float");
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  wrong_type(*this, column, "csv_float", "numbers");
}

const std::string& CsvRecord::string_at(std::size_t column) const {
  const CsvValue& v = value(column, "csv_string");
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  wrong_type(*this, column, "csv_string", "string");
}

std::vector<float> CsvRecord::floats(const std::vector<std::string>& columns) const {
  std::vector<float> out;
  out.reserve(columns.size());
  for (const std::string& c : columns) out.push_back(static_cast<float>(float_at(c)));
  return out;
}

namespace {

/// Fields of every record, collected by libcsv's callbacks.
struct Collector {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> current;
};

extern "C" void on_field(void* text, std::size_t len, void* data) {
  auto* c = static_cast<Collector*>(data);
  c->current.emplace_back(text ? static_cast<const char*>(text) : "", text ? len : 0);
}

extern "C" void on_record(int, void* data) {
  auto* c = static_cast<Collector*>(data);
  c->records.push_back(std::move(c->current));
  c->current.clear();
}

bool parse_int(const std::string& s, std::int64_t& out) {
  const char* b = s.data();
  const char* e = b + s.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, out);
  return b != e && ec == std::errc() && p == e;
}

bool parse_float(const std::string& s, double& out) {
  if (s.empty()) {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  const char* b = s.data();
  const char* e = b + s.size();
  if (*b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, out);
  return b != e && ec == std::errc() && p == e;
}

}  // namespace

void CsvDataset::parse(std::string_view text, const CsvOptions& options,
                       const std::string& source) {
  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI) != 0) {
    ember::detail::fail<IoError>("csv", source, ": could not start the parser");
  }
  csv_set_delim(&parser, static_cast<unsigned char>(options.delimiter));
  csv_set_quote(&parser, static_cast<unsigned char>(options.quote));
  Collector collector;
  const std::size_t done =
      csv_parse(&parser, text.data(), text.size(), on_field, on_record, &collector);
  const bool ok = done == text.size() && csv_fini(&parser, on_field, on_record, &collector) == 0;
  const int err = csv_error(&parser);
  csv_free(&parser);
  if (!ok) {
    ember::detail::fail<IoError>("csv", source, ": ", csv_strerror(err), " in record ",
                                 collector.records.size() + 1);
  }

  auto& records = collector.records;
  auto schema = std::make_shared<CsvSchema>();
  std::size_t first_data = 0;
  if (!records.empty()) {
    const std::size_t width = records[0].size();
    if (options.header) {
      schema->names = records[0];
      // A UTF-8 byte order mark is not part of the first name.
      std::string& n0 = schema->names[0];
      if (n0.rfind("\xEF\xBB\xBF", 0) == 0) n0.erase(0, 3);
      first_data = 1;
    } else {
      for (std::size_t c = 0; c < width; ++c) schema->names.push_back(std::to_string(c));
    }
    for (std::size_t r = 1; r < records.size(); ++r) {
      if (records[r].size() != width) {
        ember::detail::fail<IoError>("csv", source, ": record ", r + 1, " has ", records[r].size(),
                                     " fields, expected ", width,
                                     options.header ? " (as the header)" : " (as record 1)");
      }
    }
  }
  for (const auto& [name, type] : options.types) schema->index(name);  // unknown names throw

  const std::size_t width = schema->names.size();
  schema->types.resize(width, ColumnType::String);
  for (std::size_t c = 0; c < width; ++c) {
    if (auto it = options.types.find(schema->names[c]); it != options.types.end()) {
      schema->types[c] = it->second;
      continue;
    }
    bool all_int = true, all_float = true, any = false;
    for (std::size_t r = first_data; r < records.size() && all_float; ++r) {
      const std::string& s = records[r][c];
      std::int64_t i;
      double d;
      if (!s.empty()) any = true;
      all_int = all_int && !s.empty() && parse_int(s, i);
      all_float = all_float && parse_float(s, d);
    }
    schema->types[c] = !any        ? ColumnType::String
                       : all_int   ? ColumnType::Int
                       : all_float ? ColumnType::Float
                                   : ColumnType::String;
  }

  rows_.reserve(records.size() - first_data);
  for (std::size_t r = first_data; r < records.size(); ++r) {
    std::vector<CsvValue> row;
    row.reserve(width);
    for (std::size_t c = 0; c < width; ++c) {
      std::string& s = records[r][c];
      const ColumnType type = schema->types[c];
      bool ok_value = true;
      if (type == ColumnType::Int) {
        std::int64_t i = 0;
        ok_value = parse_int(s, i);
        row.emplace_back(i);
      } else if (type == ColumnType::Float) {
        double d = 0;
        ok_value = parse_float(s, d);
        row.emplace_back(d);
      } else {
        row.emplace_back(std::move(s));
      }
      if (!ok_value) {
        ember::detail::fail<IoError>("csv", source, ": record ", r + 1, ", column \"",
                                     schema->names[c], "\": \"", s, "\" is not a ",
                                     column_type_name(type), " value");
      }
    }
    rows_.push_back(std::move(row));
  }
  schema_ = std::move(schema);
}

CsvDataset::CsvDataset(const std::filesystem::path& path, CsvOptions options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ember::detail::fail<IoError>("csv", path.string(), ": cannot open (", std::strerror(errno),
                                 ")");
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) ember::detail::fail<IoError>("csv", path.string(), ": read error");
  parse(buffer.str(), options, path.string());
}

std::shared_ptr<CsvDataset> CsvDataset::from_string(std::string_view text, CsvOptions options,
                                                    std::string source) {
  std::shared_ptr<CsvDataset> ds(new CsvDataset());
  ds->parse(text, options, source);
  return ds;
}

std::optional<CsvRecord> CsvDataset::get(std::size_t index) const {
  if (index >= rows_.size()) return std::nullopt;
  return CsvRecord(schema_, rows_[index]);
}

}  // namespace ember::data
