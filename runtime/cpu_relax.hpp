// The pause of a spin-wait loop: tells the core a thread is spinning (on x86,
// frees the pipeline for its sibling hyperthread and saves power).
#pragma once

namespace ftmpi::runtime {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

}  // namespace ftmpi::runtime
