#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "transport/match_bits.hpp"

using namespace ftmpi::transport;

TEST_CASE("match bits round-trip every field at its extremes", "[transport][match_bits]") {
    const Proto protos[] = {Proto::eager, Proto::rts, Proto::cts};
    const std::uint32_t contexts[] = {0, 1, 2, 12345, max_context - 1, max_context};
    const std::int32_t tags[] = {0, 1, 7, 32767, 1 << 30, max_tag};
    for (Proto p : protos)
        for (std::uint32_t c : contexts)
            for (std::int32_t t : tags) {
                const Match m = unpack_match(pack_match(p, c, t));
                CHECK(m.proto == p);
                CHECK(m.context == c);
                CHECK(m.tag == t);
            }
}

TEST_CASE("fields do not bleed into each other", "[transport][match_bits]") {
    CHECK(pack_match(Proto::eager, 0, max_tag) == bits::tag_mask);
    CHECK(pack_match(Proto::eager, max_context, 0) == bits::ctx_mask);
    CHECK((pack_match(Proto::cts, 0, 0) & ~bits::proto_mask) == 0);
    // A value wider than its field is cut to the field, never spills over.
    CHECK(unpack_match(pack_match(Proto::eager, max_context + 1, 0)).context == 0);
}

TEST_CASE("tag range is what MPI_TAG_UB promises", "[transport][match_bits]") {
    STATIC_REQUIRE(max_tag >= 32767);  // the MPI minimum for MPI_TAG_UB
    CHECK(max_tag == 0x7fffffff);
}

TEST_CASE("only bulk messages carry the bulk bit", "[transport][match_bits]") {
    CHECK((pack_bulk(0) & bits::bulk_bit) != 0);
    CHECK((pack_bulk(bits::id_mask) & bits::bulk_bit) != 0);
    for (Proto p : {Proto::eager, Proto::rts, Proto::cts})
        CHECK((pack_match(p, max_context, max_tag) & bits::bulk_bit) == 0);
    CHECK(unpack_bulk(pack_bulk(0x123456789abcull)) == 0x123456789abcull);
    CHECK(unpack_match(pack_bulk(5)).proto == Proto::bulk);
}

TEST_CASE("CQ data carries the source process and rank", "[transport][match_bits]") {
    const std::uint64_t d = pack_source(4000000000u, 123456);
    CHECK(source_process(d) == 4000000000u);
    CHECK(source_rank(d) == 123456);
    CHECK(source_rank(pack_source(0, 0x7fffffff)) == 0x7fffffff);
}

TEST_CASE("untagged messages are read only with the token and a payload their protocol fits",
          "[transport][match_bits]") {
    const std::uint64_t token = 0xabcdef0123456789ull;
    auto message = [&](Proto p, std::size_t payload, std::uint64_t tok) {
        std::vector<char> m(k_untagged_header + payload, 0);
        const Header h{pack_match(p, 5, 9), 77};
        std::memcpy(m.data(), &h, sizeof h);
        std::memcpy(m.data() + sizeof h, &tok, sizeof tok);
        return m;
    };
    Untagged out;
    auto eager = message(Proto::eager, 3, token);
    CHECK(read_untagged(eager.data(), eager.size(), token, sizeof(RtsPayload), out) == nullptr);
    CHECK(out.len == 3);
    CHECK(out.header.uid == 77);
    CHECK(unpack_match(out.header.match).tag == 9);
    auto forged = message(Proto::eager, 3, token ^ 1);
    CHECK(read_untagged(forged.data(), forged.size(), token, sizeof(RtsPayload), out) != nullptr);
    CHECK(read_untagged(eager.data(), k_untagged_header - 1, token, sizeof(RtsPayload), out) != nullptr);
    auto short_rts = message(Proto::rts, sizeof(RtsPayload) - 1, token);
    CHECK(read_untagged(short_rts.data(), short_rts.size(), token, sizeof(RtsPayload), out) != nullptr);
    auto rts = message(Proto::rts, sizeof(RtsPayload), token);
    CHECK(read_untagged(rts.data(), rts.size(), token, sizeof(RtsPayload), out) == nullptr);
    auto short_cts = message(Proto::cts, sizeof(CtsPayload) - 1, token);
    CHECK(read_untagged(short_cts.data(), short_cts.size(), token, sizeof(RtsPayload), out) != nullptr);
    // Fragments are shm's only; bulk data is never untagged.
    auto frag = message(Proto::frag, 64, token);
    CHECK(read_untagged(frag.data(), frag.size(), token, sizeof(RtsPayload), out) != nullptr);
    auto bulk = message(Proto::bulk, 64, token);
    CHECK(read_untagged(bulk.data(), bulk.size(), token, sizeof(RtsPayload), out) != nullptr);
    CHECK(malformed(pack_match(Proto::frag, 0, 0), sizeof(FragHeader), 32, sizeof(FragHeader)) == nullptr);
    CHECK(malformed(pack_match(Proto::frag, 0, 0), sizeof(FragHeader) - 1, 32, sizeof(FragHeader)) != nullptr);
    CHECK(malformed(std::uint64_t{7} << bits::proto_shift, 0, 32, sizeof(FragHeader)) != nullptr);  // no protocol 7
}
