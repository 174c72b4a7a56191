// CSV datasets: one item per record, with typed columns (int, float or string).
//
//   data::CsvDataset iris("iris.csv");                    // header row, types inferred
//   data::CsvRecord r = iris.at(0);
//   double len = r.float_at("sepal_length");
//   std::string name = r.string_at("species");
//
// Parsing is done by Debian's libcsv (RFC 4180: quoted fields with embedded delimiters,
// newlines and doubled quotes; spaces around unquoted fields are dropped). The whole file is
// read when the dataset is constructed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ember/data/dataset.hpp"

namespace ember::data {

/// The type of a CSV column.
enum class ColumnType { Int, Float, String };

/// "int", "float", "string".
const char* column_type_name(ColumnType type);

/// How to read a CSV file.
struct CsvOptions {
  char delimiter = ',';
  char quote = '"';
  /// The first record names the columns. Without a header, columns are named "0", "1", ...
  bool header = true;
  /// Column types by name; columns not listed are inferred: Int when every value is an
  /// integer, Float when every value is a number (empty values allowed, read as NaN), else
  /// String.
  std::map<std::string, ColumnType> types = {};
};

/// Column names and types, shared by all records of a dataset.
struct CsvSchema {
  std::vector<std::string> names;
  std::vector<ColumnType> types;

  /// The index of column `name`; throws ValueError "[csv] no column "x" (columns: a, b)".
  std::size_t index(std::string_view name) const;
};

/// One value: int64 for Int columns, double for Float columns, string for String columns.
using CsvValue = std::variant<std::int64_t, double, std::string>;

/// One CSV record (a row), with typed accessors by column index or name.
class CsvRecord {
 public:
  CsvRecord() = default;
  CsvRecord(std::shared_ptr<const CsvSchema> schema, std::vector<CsvValue> values)
      : schema_(std::move(schema)), values_(std::move(values)) {}

  /// The value of an Int column. Throws ValueError for another type or a bad column.
  std::int64_t int_at(std::size_t column) const;
  std::int64_t int_at(std::string_view column) const { return int_at(schema().index(column)); }
  /// The value of a Float or Int column as double. Throws ValueError for a String column.
  double float_at(std::size_t column) const;
  double float_at(std::string_view column) const { return float_at(schema().index(column)); }
  /// The value of a String column. Throws ValueError for another type or a bad column.
  const std::string& string_at(std::size_t column) const;
  const std::string& string_at(std::string_view column) const {
    return string_at(schema().index(column));
  }
  /// The named numeric columns as floats, in the given order (e.g. a feature vector).
  /// Throws ValueError for a String column or an unknown name.
  std::vector<float> floats(const std::vector<std::string>& columns) const;

  const std::vector<CsvValue>& values() const { return values_; }
  const CsvSchema& schema() const;

 private:
  const CsvValue& value(std::size_t column, const char* op) const;

  std::shared_ptr<const CsvSchema> schema_;
  std::vector<CsvValue> values_;
};

/// A CSV file loaded into memory, one CsvRecord per data record.
class CsvDataset final : public Dataset<CsvRecord> {
 public:
  /// Reads and parses `path`. Throws IoError "[csv] <file>: <problem>" when the file cannot
  /// be read, a quote is malformed, a record has a different number of fields than the
  /// first, or a value does not fit its declared type (naming record and column; records
  /// count from 1, the header included); ValueError when `types` names an unknown column.
  explicit CsvDataset(const std::filesystem::path& path, CsvOptions options = {});

  /// Parses CSV text held in memory; `source` names it in error messages.
  static std::shared_ptr<CsvDataset> from_string(std::string_view text, CsvOptions options = {},
                                                 std::string source = "<string>");

  std::optional<CsvRecord> get(std::size_t index) const override;
  std::size_t len() const override { return rows_.size(); }

  /// Column names and types.
  const CsvSchema& schema() const { return *schema_; }

 private:
  CsvDataset() = default;
  void parse(std::string_view text, const CsvOptions& options, const std::string& source);

  std::shared_ptr<const CsvSchema> schema_;
  std::vector<std::vector<CsvValue>> rows_;
};

}  // namespace ember::data
