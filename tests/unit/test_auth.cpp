#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "runtime/auth.hpp"

using namespace ftmpi::runtime::auth;

namespace {
std::string hex(const Digest &d) {
    std::string s;
    char b[3];
    for (auto c : d) {
        std::snprintf(b, sizeof b, "%02x", c);
        s += b;
    }
    return s;
}
Digest sha(const std::string &m) {
    Sha256 s;
    s.update(m.data(), m.size());
    return s.finish();
}
}  // namespace

TEST_CASE("SHA-256 matches FIPS 180-2's examples", "[auth]") {
    CHECK(hex(sha("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(hex(sha("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(hex(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    Sha256 s;  // one million 'a', fed in uneven pieces
    const std::string piece(997, 'a');
    std::size_t left = 1000000;
    while (left > 0) {
        const std::size_t n = std::min(left, piece.size());
        s.update(piece.data(), n);
        left -= n;
    }
    CHECK(hex(s.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("HMAC-SHA-256 matches RFC 4231's test cases", "[auth]") {
    const std::string key1(20, '\x0b');
    CHECK(hex(hmac(bytes(key1), {bytes(std::string("Hi There"))})) ==
          "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    // Case 2, with the message split in two parts.
    CHECK(hex(hmac(bytes(std::string("Jefe")),
                   {bytes(std::string("what do ya want ")), bytes(std::string("for nothing?"))})) ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    // Case 6: a key longer than a block is hashed first.
    const std::string key6(131, '\xaa');
    CHECK(hex(hmac(bytes(key6), {bytes(std::string("Test Using Larger Than Block-Size Key - Hash Key First"))})) ==
          "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("equal compares every byte; derive64 depends on secret and label", "[auth]") {
    const char a[] = "0123456789", b[] = "0123456789", c[] = "0123456780";
    CHECK(equal(a, b, 10));
    CHECK_FALSE(equal(a, c, 10));
    std::string s1(32, '\0'), s2(32, '\0');
    random_bytes(s1.data(), s1.size());
    random_bytes(s2.data(), s2.size());
    CHECK(s1 != s2);
    CHECK(derive64(s1, "x") == derive64(s1, "x"));
    CHECK(derive64(s1, "x") != derive64(s1, "y"));
    CHECK(derive64(s1, "x") != derive64(s2, "x"));
}

#include "transport/link_auth.hpp"

using ftmpi::transport::LinkAuth;

namespace {
struct Pair {
    std::string key_w, key_l;
    std::uint8_t nw[16] = {1}, nl[16] = {2};
    LinkAuth w, l;
    Pair(const std::string &kw, const std::string &kl, std::uint32_t listener_rank = 3)
        : key_w(kw), key_l(kl), w(LinkAuth::Role::watcher, key_w, 1, listener_rank, 4, nw),
          l(LinkAuth::Role::listener, key_l, 3, 0, 4, nl) {}
    // Carries what each side has to say to the other, once.
    void exchange() {
        const std::string hello = w.take_output();
        l.feed(hello.data(), hello.size());
        const std::string proof = l.take_output();
        w.feed(proof.data(), proof.size());
        const std::string reply = w.take_output();
        l.feed(reply.data(), reply.size());
    }
};
}  // namespace

TEST_CASE("a liveness handshake proves the secret both ways", "[auth][link]") {
    const std::string k(32, 'k');
    Pair p(k, k);
    p.exchange();
    CHECK(p.w.state() == LinkAuth::State::proven);
    CHECK(p.l.state() == LinkAuth::State::proven);
    CHECK(p.l.peer() == 1);
    CHECK(p.l.may_say_goodbye());
    const char bye = 'B';
    CHECK(p.w.feed(&bye, 1) == LinkAuth::State::goodbye);
}

TEST_CASE("a liveness handshake byte by byte gives the same result", "[auth][link]") {
    const std::string k(32, 'k');
    Pair p(k, k);
    for (char c : p.w.take_output()) p.l.feed(&c, 1);
    for (char c : p.l.take_output()) p.w.feed(&c, 1);
    for (char c : p.w.take_output()) p.l.feed(&c, 1);
    CHECK(p.w.state() == LinkAuth::State::proven);
    CHECK(p.l.state() == LinkAuth::State::proven);
}

TEST_CASE("without the secret, each side refuses the other", "[auth][link]") {
    Pair p(std::string(32, 'a'), std::string(32, 'b'));
    p.exchange();
    CHECK(p.w.state() == LinkAuth::State::refused);  // the listener's proof is wrong
    CHECK(p.w.why() == "a wrong proof");
    // A watcher that fakes its reply is refused by the listener.
    Pair q(std::string(32, 'a'), std::string(32, 'b'));
    const std::string hello = q.w.take_output();
    q.l.feed(hello.data(), hello.size());
    (void)q.l.take_output();
    const std::string fake = "W" + std::string(32, 'x');
    CHECK(q.l.feed(fake.data(), fake.size()) == LinkAuth::State::refused);
    CHECK(q.l.may_say_goodbye());  // its proof went out: a goodbye would be read after it
}

TEST_CASE("the listener refuses hellos that are not for it, and junk", "[auth][link]") {
    const std::string k(32, 'k');
    Pair other(k, k, 2);  // meant for rank 2
    other.exchange();
    CHECK(other.l.state() == LinkAuth::State::refused);
    CHECK(other.l.why() == "a hello for another rank");
    CHECK(other.w.state() == LinkAuth::State::pending);
    std::uint8_t n[16] = {};
    LinkAuth l(LinkAuth::Role::listener, k, 3, 0, 4, n);
    CHECK(l.feed("GET / HTTP/1.0\r\n", 16) == LinkAuth::State::refused);
    LinkAuth l2(LinkAuth::Role::listener, k, 3, 0, 4, n);
    const std::string long_junk = "H" + std::string(200, '\0');  // watcher rank 0, listener rank 0: not this one
    CHECK(l2.feed(long_junk.data(), long_junk.size()) == LinkAuth::State::refused);
    // A watcher refuses a goodbye before the listener proved itself.
    LinkAuth w(LinkAuth::Role::watcher, k, 1, 3, 4, n);
    CHECK(w.feed("B", 1) == LinkAuth::State::refused);
}
