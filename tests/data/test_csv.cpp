// CSV datasets: header, quoted fields (delimiters, newlines, doubled quotes inside), type
// inference and declared types, missing values, errors naming file, record and column.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "ember/data/csv.hpp"

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

}  // namespace

TEST(Csv, ReadsFileWithHeaderQuotesAndInferredTypes) {
  const fs::path path =
      fs::temp_directory_path() / ("ember_data_csv_" + std::to_string(::getpid()) + ".csv");
  {
    std::ofstream out(path, std::ios::binary);
    out << "\xEF\xBB\xBFid,weight,name,note\r\n"
        << "1,0.5,\"Smith, Anna\",plain\r\n"
        << "2, -3 ,\"say \"\"hi\"\"\",\"two\nlines\"\r\n"
        << "\n"
        << "-7,1e3,Bob,\r\n";
  }
  CsvDataset ds(path);
  fs::remove(path);
  ASSERT_EQ(ds.len(), 3u);
  const CsvSchema& schema = ds.schema();
  EXPECT_EQ(schema.names, (std::vector<std::string>{"id", "weight", "name", "note"}));
  EXPECT_EQ(schema.types, (std::vector<ColumnType>{ColumnType::Int, ColumnType::Float,
                                                   ColumnType::String, ColumnType::String}));
  const CsvRecord r0 = ds.at(0);
  EXPECT_EQ(r0.int_at("id"), 1);
  EXPECT_DOUBLE_EQ(r0.float_at("weight"), 0.5);
  EXPECT_EQ(r0.string_at("name"), "Smith, Anna");
  const CsvRecord r1 = ds.at(1);
  EXPECT_DOUBLE_EQ(r1.float_at(1), -3.0);  // spaces around an unquoted field are dropped
  EXPECT_EQ(r1.string_at("name"), "say \"hi\"");
  EXPECT_EQ(r1.string_at("note"), "two\nlines");
  const CsvRecord r2 = ds.at(2);
  EXPECT_EQ(r2.int_at(0), -7);
  EXPECT_DOUBLE_EQ(r2.float_at("weight"), 1000.0);
  EXPECT_EQ(r2.string_at("note"), "");
  EXPECT_DOUBLE_EQ(r2.float_at("id"), -7.0);  // an int column reads as float too
  EXPECT_EQ(r2.floats({"weight", "id"}), (std::vector<float>{1000.0f, -7.0f}));
}

TEST(Csv, MissingNumbersAndDeclaredTypes) {
  auto ds = CsvDataset::from_string("a;b;c\n1;;x\n2;2.5;7\n", {.delimiter = ';'});
  // "b" has an empty value: float with NaN; "c" mixes text and numbers: string.
  EXPECT_EQ(ds->schema().types,
            (std::vector<ColumnType>{ColumnType::Int, ColumnType::Float, ColumnType::String}));
  EXPECT_TRUE(std::isnan(ds->at(0).float_at("b")));
  EXPECT_EQ(ds->at(1).string_at("c"), "7");

  auto typed = CsvDataset::from_string(
      "a,b\n1,2\n3,4\n", {.types = {{"a", ColumnType::Float}, {"b", ColumnType::String}}});
  EXPECT_EQ(typed->schema().types,
            (std::vector<ColumnType>{ColumnType::Float, ColumnType::String}));
  EXPECT_EQ(typed->at(1).string_at("b"), "4");
  EXPECT_DOUBLE_EQ(typed->at(1).float_at("a"), 3.0);
}

TEST(Csv, NoHeaderNamesColumnsByPosition) {
  auto ds = CsvDataset::from_string("5,a\n6,b", {.header = false});
  ASSERT_EQ(ds->len(), 2u);  // the last record has no newline
  EXPECT_EQ(ds->schema().names, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(ds->at(1).int_at("0"), 6);
  EXPECT_EQ(ds->at(1).string_at(1), "b");
}

TEST(Csv, Errors) {
  EXPECT_EQ(error_of<IoError>([] { CsvDataset::from_string("a,b\n1,2\n3\n", {}, "t.csv"); }),
            "[csv] t.csv: record 3 has 1 fields, expected 2 (as the header)");
  EXPECT_EQ(error_of<IoError>([] {
              CsvDataset::from_string("a,b\n1,x\n", {.types = {{"b", ColumnType::Int}}}, "t.csv");
            }),
            "[csv] t.csv: record 2, column \"b\": \"x\" is not a int value");
  EXPECT_TRUE(
      contains(error_of<IoError>([] { CsvDataset::from_string("a,b\n\"open,2\n", {}, "q.csv"); }),
               "[csv] q.csv: "));
  EXPECT_TRUE(
      contains(error_of<IoError>([] { CsvDataset::from_string("a\n\"x\"y\n", {}, "q2.csv"); }),
               "[csv] q2.csv: "));
  EXPECT_EQ(error_of<ValueError>([] {
              CsvDataset::from_string("a,b\n1,2\n", {.types = {{"z", ColumnType::Int}}});
            }),
            "[csv] no column \"z\" (columns: a, b)");
  auto ds = CsvDataset::from_string("a,s\n1,x\n");
  EXPECT_EQ(error_of<ValueError>([&] { ds->at(0).int_at("s"); }),
            "[csv_int] column \"s\" holds string values, not int");
  EXPECT_EQ(error_of<ValueError>([&] { ds->at(0).float_at("s"); }),
            "[csv_float] column \"s\" holds string values, not numbers");
  EXPECT_EQ(error_of<ValueError>([&] { ds->at(0).string_at(5); }),
            "[csv_string] column 5 is out of range for a record of 2 columns");
  EXPECT_TRUE(contains(error_of<IoError>([] { CsvDataset("/nonexistent/x.csv"); }),
                       "[csv] /nonexistent/x.csv: cannot open ("));
  EXPECT_EQ(CsvDataset::from_string("")->len(), 0u);
}
