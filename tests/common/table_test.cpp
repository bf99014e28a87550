#include "gpulab/table.hpp"

#include <gtest/gtest.h>

using gpulab::Table;

TEST(Table, AlignsColumnsToTheWidestCell) {
  Table t;
  t.column("name", Table::Align::kLeft).column("value");
  t.row({"a", "1"}).row({"longer", "12345"});
  EXPECT_EQ(t.render(),
            "name    value\n"
            "a           1\n"
            "longer  12345\n");
}

TEST(Table, MinimumWidthsReproduceAFixedFormat) {
  Table t("");
  t.column("kernel", Table::Align::kLeft, 16).column("issues", Table::Align::kRight, 8);
  t.row({"uniform", "6"});
  EXPECT_EQ(t.render(), "kernel            issues\nuniform                6\n");
}

TEST(Table, MultibyteCellsAlignByCharacters) {
  Table t;
  t.column("unit", Table::Align::kLeft).column("x");
  t.row({"µs", "1"}).row({"ns", "2"});
  EXPECT_EQ(t.render(), "unit  x\nµs    1\nns    2\n");
}

TEST(Table, RuleSpansTheTable) {
  Table t;
  t.column("a").column("b");
  t.row({"1", "2"}).rule();
  EXPECT_EQ(t.render(), "a  b\n1  2\n----\n");
  EXPECT_THROW(t.row({"1", "2", "3"}), std::logic_error);
}
