// libFuzzer target: the frames ftmpirun's daemons exchange (launcher/wire.hpp),
// as a link receives them: open() over arbitrary bytes, then every field of
// an opened payload. Nothing may crash or read out of bounds; an input that
// opens must be a frame this key and sequence number sealed.
#include <cstddef>
#include <cstdint>
#include <string>

#include "launcher/wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    namespace wire = ftmpi::launcher::wire;
    static const std::string key(32, 'k');
    wire::Frame f;
    if (wire::open(key, 0, {data, size}, f) != wire::Opened::ok) return 0;
    wire::Reader r(f.payload);
    while (r.ok() && !r.done()) {
        r.u8();
        r.str();
        r.u64();
    }
    return 0;
}
