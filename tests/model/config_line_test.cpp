// config_line (tests/support/config_line.hpp), with which the model tests declare their cases:
// each key=value reaches its field through the field list, quoted values keep their spaces,
// later words override earlier ones and the base, and a wrong key or value is refused.
#include "support/config_line.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "normlab/model/placement.hpp"

namespace normlab {
namespace {

using testing::config_line;

TEST(ConfigLine, EachWordSetsItsField) {
  ModelConfig base;
  base.layers = 7;
  const ModelConfig c = config_line(
      "scheme=block_attnres block_size=3 norm=layernorm pos=rope heads=4 causal=false "
      "init_std=0.25 scaled_init=false attn_norms=in+out:derf qk_norm=l2",
      base);
  EXPECT_EQ(c.scheme, Scheme::block_attnres);
  EXPECT_EQ(c.block_size, 3);
  EXPECT_EQ(c.norm, NormKind::layernorm);
  EXPECT_EQ(c.pos, PosEncoding::rope);
  EXPECT_EQ(c.heads, 4);
  EXPECT_FALSE(c.causal);
  EXPECT_EQ(c.init_std, 0.25);
  EXPECT_FALSE(c.scaled_residual_init);  // its key is scaled_init
  EXPECT_EQ(to_string(c.attn_norms), to_string(parse_norm_placement("in+out:derf")));
  EXPECT_EQ(c.qk_norm, QkNorm::l2);
  EXPECT_EQ(c.layers, 7) << "a field the line does not name keeps the base's value";
}

TEST(ConfigLine, QuotedValuesKeepTheirSpacesAndLaterWordsWin) {
  const ModelConfig c =
      config_line("layers=2 placement=\"attn[0:1]: post, residual=0.5; final: off\" layers=3", {});
  EXPECT_EQ(c.layers, 3);
  EXPECT_EQ(to_string(c.placement),
            to_string(parse_placement("attn[0:1]: post, residual=0.5; final: off")));
}

TEST(ConfigLine, WrongWordsAreRefused) {
  for (const char* line : {"layer=3", "layers", "=3", "layers=3x", "layers=", "causal=yes",
                           "init_std=0.1.2", "placement=\"all: in", "layers=99999999999"}) {
    EXPECT_THROW(config_line(line, {}), std::invalid_argument) << line;
  }
  EXPECT_ANY_THROW(config_line("scheme=nosuch", {}));  // the word's own parser refuses it
}

}  // namespace
}  // namespace normlab
