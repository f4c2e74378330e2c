// SHA-256 against the FIPS 180-2 test vectors (empty, one block, two blocks, a million bytes);
// incremental feeding across block boundaries, copies, reuse after a digest; field() framing.
#include <gtest/gtest.h>

#include "common/sha256.h"

using namespace ptxbench;

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // 112 bytes: two blocks of message, the length in a third.
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                       "mnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(64, 'x')), "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(Sha256().hex_digest(), sha256_hex(""));
  Sha256 split;
  split.update("ab").update("c");
  EXPECT_EQ(split.hex_digest(), sha256_hex("abc"));
}

TEST(Sha256, IncrementalAcrossBlocksCopiesAndReuse) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += static_cast<char>('a' + i % 26);
  Sha256 h;
  for (std::size_t at = 0, step = 1; at < text.size(); at += step, step = step * 2 + 1)
    h.update(std::string_view(text).substr(at, step));  // pieces of 1, 3, 7, ... bytes straddle blocks
  Sha256 copy = h;
  EXPECT_EQ(h.hex_digest(), sha256_hex(text));
  copy.update("!");  // the copy goes on from the same state, independently
  EXPECT_EQ(copy.hex_digest(), sha256_hex(text + "!"));
  EXPECT_EQ(h.update("abc").hex_digest(), sha256_hex("abc")) << "a digest starts the object over";
  Sha256 moved = std::move(copy);
  EXPECT_EQ(moved.update("abc").hex_digest(), sha256_hex("abc"));
}

TEST(Sha256, FieldsAreFramed) {
  EXPECT_NE(Sha256().field("ab").field("c").hex_digest(), Sha256().field("a").field("bc").hex_digest());
  EXPECT_EQ(Sha256().field("ab").field("c").hex_digest(), sha256_hex("2:ab1:c"));
}
