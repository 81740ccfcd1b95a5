// Flattening: every constructor reduces to copies of a layout placed at
// displacements with a stride; the result is merged blocks + signature runs.
#include <algorithm>
#include <cstring>
#include <utility>

#include "mpi/dt/derived.hpp"
#include "mpi/dt/predefined.hpp"

namespace ftmpi::mpi {
namespace {

void push_block(Layout &out, MPI_Aint off, std::size_t len) {
    if (!out.blocks.empty()) {
        Block &last = out.blocks.back();
        if (last.off + static_cast<MPI_Aint>(last.len) == off) {
            last.len += len;
            return;
        }
    }
    out.blocks.push_back({off, len});
}

void push_sig(Layout &out, MPI_Datatype type, std::size_t count) {
    if (!out.sig.empty() && out.sig.back().type == type) {
        out.sig.back().count += count;
        return;
    }
    out.sig.push_back({type, count});
}

void widen(MPI_Aint &lo, MPI_Aint &hi, bool first, MPI_Aint new_lo, MPI_Aint new_hi) {
    lo = first ? new_lo : std::min(lo, new_lo);
    hi = first ? new_hi : std::max(hi, new_hi);
}

// Expands a repeated layout into plain blocks (reps 1), before more are added.
void flatten(Layout &l) {
    if (l.reps == 1) return;
    l.blocks = flat_blocks(l);
    l.reps = 1;
    l.rep_stride = 0;
}

// Appends the data runs of `count` copies of `in`, copy k at disp + k *
// stride: one run when they abut, a repetition when they are out's first
// data (vector, hvector, contiguous), else every run.
void append_blocks(Layout &out, const Layout &in, MPI_Aint disp, std::size_t count, MPI_Aint stride) {
    if (in.size == 0) return;
    const bool one_run = in.reps == 1 && in.blocks.size() == 1;
    if (one_run && (count == 1 || stride == static_cast<MPI_Aint>(in.blocks[0].len))) {
        flatten(out);
        push_block(out, disp + in.blocks[0].off, in.blocks[0].len * count);
        return;
    }
    if (out.blocks.empty() && (in.reps == 1 || count == 1)) {
        for (const Block &b : in.blocks) push_block(out, disp + b.off, b.len);
        out.reps = in.reps == 1 ? count : in.reps;
        out.rep_stride = in.reps == 1 ? stride : in.rep_stride;
        return;
    }
    flatten(out);
    for (std::size_t k = 0; k < count; ++k) {
        const MPI_Aint base = disp + static_cast<MPI_Aint>(k) * stride;
        for_each_block(in, [&](MPI_Aint off, std::size_t len) { push_block(out, base + off, len); });
    }
}

// Appends `count` copies of `in`, copy k at disp + k * stride.
void append(Layout &out, const Layout &in, MPI_Aint disp, std::size_t count, MPI_Aint stride) {
    if (count == 0) return;
    append_blocks(out, in, disp, count, stride);
    if (in.sig.size() == 1) {
        push_sig(out, in.sig[0].type, in.sig[0].count * count);
    } else {
        for (std::size_t k = 0; k < count; ++k)
            for (const SigRun &s : in.sig) push_sig(out, s.type, s.count);
    }
    const MPI_Aint span = static_cast<MPI_Aint>(count - 1) * stride;
    const MPI_Aint lo = std::min<MPI_Aint>(0, span), hi = std::max<MPI_Aint>(0, span);
    widen(out.lb, out.ub, !out.any, disp + in.lb + lo, disp + in.ub + hi);
    if (in.size > 0) {
        widen(out.true_lb, out.true_ub, out.size == 0, disp + in.true_lb + lo, disp + in.true_ub + hi);
    }
    out.any = true;
    out.size += count * in.size;
    out.align = std::max(out.align, in.align);
    out.explicit_bounds = out.explicit_bounds || in.explicit_bounds;
}

// A predefined type's layout: its members' bytes (mpi/dt/predefined.hpp).
Layout predefined_layout(MPI_Datatype t) {
    const Members &m = members_of(t);
    Layout l;
    for (int i = 0; i < m.n; ++i)
        if (m.size[i] > 0) push_block(l, static_cast<MPI_Aint>(m.off[i]), m.size[i]);
    l.sig.push_back({t, 1});
    l.size = t->size;
    l.lb = t->lb;
    l.ub = t->lb + t->extent;
    l.true_lb = 0;
    l.true_ub = static_cast<MPI_Aint>(m.off[m.n - 1] + m.size[m.n - 1]);
    l.align = t->align;
    l.any = true;
    return l;
}

}  // namespace

const Layout &type_layout(MPI_Datatype t) {
    if (t->derived != nullptr) return t->derived->layout;
    static const std::vector<Layout> predefined = [] {
        std::vector<Layout> all;
        for (int i = 0; predefined_at(i) != MPI_DATATYPE_NULL; ++i) all.push_back(predefined_layout(predefined_at(i)));
        return all;
    }();
    return predefined[static_cast<std::size_t>(predefined_index(t))];
}

Layout layout_of(MPI_Datatype t) { return type_layout(t); }

std::vector<Block> flat_blocks(const Layout &l) {
    if (l.reps == 1) return l.blocks;
    Layout flat;
    for_each_block(l, [&flat](MPI_Aint off, std::size_t len) { push_block(flat, off, len); });
    return std::move(flat.blocks);
}

Layout strided_layout(std::size_t count, std::size_t blocklength, MPI_Aint stride, MPI_Datatype old) {
    Layout out;
    if (blocklength == 0) return out;  // no block places anything
    append(out, build_layout({{0, blocklength, old}}), 0, count, stride);
    return out;
}

Layout build_layout(const std::vector<Piece> &pieces, bool struct_padding) {
    Layout out;
    for (const Piece &p : pieces) {
        const Layout &in = type_layout(p.type);
        append(out, in, p.disp, p.count, in.extent());
    }
    if (struct_padding && !out.explicit_bounds && out.align > 1) {
        const auto align = static_cast<MPI_Aint>(out.align);
        const MPI_Aint rem = out.extent() % align;
        if (rem != 0) out.ub += align - rem;
    }
    return out;
}

Layout resized_layout(Layout l, MPI_Aint lb, MPI_Aint extent) {
    l.lb = lb;
    l.ub = lb + extent;
    l.explicit_bounds = true;
    l.any = true;
    return l;
}

Layout array_layout(const std::vector<MPI_Aint> &sizes, const std::vector<std::vector<IndexRun>> &runs, int order,
                    MPI_Datatype old) {
    Layout cur = type_layout(old);
    MPI_Aint stride = cur.extent();
    const std::size_t ndims = sizes.size();
    // Fastest dimension first: the last one in C order, the first in Fortran order.
    for (std::size_t i = 0; i < ndims; ++i) {
        const std::size_t d = order == MPI_ORDER_C ? ndims - 1 - i : i;
        Layout next;
        for (const IndexRun &r : runs[d]) append(next, cur, r.start * stride, static_cast<std::size_t>(r.len), stride);
        cur = std::move(next);
        stride *= sizes[d];
    }
    return resized_layout(std::move(cur), 0, stride);
}

namespace {
// Released datatype objects, the last one on top: the next type made takes
// it, so a handle freed and then made again names the new type, as under
// MPICH and Open MPI, which recycle handles the same way (MPICH's own test
// suite builds a struct from a freed indexed type's handle after making a
// new one). A handle freed and not made again stays detectably dead. Never
// destroyed: the objects stay reachable (and valid to check) to the end.
std::vector<ftmpi_datatype_s *> &released_types() {
    static auto *list = new std::vector<ftmpi_datatype_s *>;
    return *list;
}
}  // namespace

MPI_Datatype make_type(Layout l, Contents c) {
    // A type without data nor explicit bounds has an empty typemap: lb = ub
    // = 0 (MPI 3.1 §4.1.6), wherever its empty parts were placed (a struct
    // of an indexed type whose blocks are all empty, at displacement 28,
    // would otherwise carry lb 28 into the types built from it and shift
    // their elements; MPICH 4.0.2 gives 0 too).
    if (l.size == 0 && !l.explicit_bounds) {
        l.lb = l.ub = 0;
        l.true_lb = l.true_ub = 0;
    }
    ftmpi_datatype_s *t;
    if (auto &released = released_types(); released.empty()) {
        t = new ftmpi_datatype_s{};
    } else {
        t = released.back();
        released.pop_back();
        *t = ftmpi_datatype_s{};
    }
    t->magic = Magic::datatype;
    t->size = l.size;
    t->lb = l.lb;
    t->extent = l.extent();
    t->predefined = false;
    t->committed = false;
    t->align = l.align;
    t->contiguous = l.blocks.empty() || (l.reps == 1 && l.blocks.size() == 1 && l.blocks[0].off == 0 &&
                                         static_cast<MPI_Aint>(l.blocks[0].len) == t->extent);
    for (MPI_Datatype in : c.types) dt_acquire(in);
    t->derived = new ftmpi_dt_derived_s{std::move(l), std::move(c)};
    t->name = t->derived->name;
    return t;
}

void dt_acquire(MPI_Datatype t) {
    if (t->derived != nullptr) ++t->derived->refs;
}

// Iterative: destroying a type releases the types it was built from, which
// may be destroyed in turn, however deep the nesting.
void dt_release(MPI_Datatype t) {
    std::vector<MPI_Datatype> todo{t};
    while (!todo.empty()) {
        MPI_Datatype x = todo.back();
        todo.pop_back();
        if (x->derived == nullptr || --x->derived->refs > 0) continue;
        todo.insert(todo.end(), x->derived->contents.types.begin(), x->derived->contents.types.end());
        x->magic = Magic::dead;
        delete x->derived;
        x->derived = nullptr;
        released_types().push_back(x);
    }
}

void dt_new_handle(MPI_Datatype t) {
    if (t->derived == nullptr || t->derived->permanent) return;
    ++t->derived->refs;
    ++t->derived->handles;
}

void pack(const void *buf, std::size_t count, MPI_Datatype t, void *out) {
    auto *dst = static_cast<char *>(out);
    if (t->contiguous) {
        if (count * t->size > 0) std::memcpy(dst, buf, count * t->size);
        return;
    }
    const Layout &l = type_layout(t);
    for (std::size_t i = 0; i < count; ++i) {
        const MPI_Aint base = static_cast<MPI_Aint>(i) * t->extent;
        for_each_block(l, [&](MPI_Aint off, std::size_t len) {
            std::memcpy(dst, byte_at(buf, base + off), len);
            dst += len;
        });
    }
}

void unpack(const void *in, std::size_t bytes, void *buf, MPI_Datatype t) {
    const auto *src = static_cast<const char *>(in);
    if (t->contiguous) {
        if (bytes > 0) std::memcpy(buf, src, bytes);
        return;
    }
    const Layout &l = type_layout(t);
    for (std::size_t i = 0; bytes > 0; ++i) {
        const MPI_Aint base = static_cast<MPI_Aint>(i) * t->extent;
        for (std::size_t r = 0; r < l.reps && bytes > 0; ++r) {
            const MPI_Aint rep = static_cast<MPI_Aint>(r) * l.rep_stride;
            for (const Block &b : l.blocks) {
                const std::size_t n = std::min(b.len, bytes);
                std::memcpy(byte_at(buf, base + rep + b.off), src, n);
                src += n;
                bytes -= n;
                if (bytes == 0) return;
            }
        }
    }
}

MPI_Count whole_elements_of(MPI_Datatype t, std::size_t bytes) {
    if (t->size == 0) return 0;
    return bytes % t->size == 0 ? static_cast<MPI_Count>(bytes / t->size) : MPI_UNDEFINED;
}

// The basic elements are the members of the predefined types in the
// signature: a pair type has two (MPI_DOUBLE_INT: a double and an int), so
// 20 bytes received as MPI_DOUBLE_INT are 3 elements (as MPICH counts).
MPI_Count elements_of(MPI_Datatype t, std::size_t bytes) {
    const Layout &l = type_layout(t);
    if (l.size == 0) return 0;
    std::size_t per_element = 0;
    for (const SigRun &s : l.sig) per_element += s.count * static_cast<std::size_t>(members_of(s.type).n);
    MPI_Count n = static_cast<MPI_Count>(bytes / l.size * per_element);
    std::size_t rem = bytes % l.size;
    for (const SigRun &s : l.sig) {
        if (rem == 0) break;
        const Members &m = members_of(s.type);
        const std::size_t k = std::min(s.count, rem / s.type->size);
        n += static_cast<MPI_Count>(k * static_cast<std::size_t>(m.n));
        rem -= k * s.type->size;
        if (k == s.count) continue;
        for (int i = 0; i < m.n && rem >= m.size[i]; ++i) {  // the members of a partial pair
            ++n;
            rem -= m.size[i];
        }
        break;
    }
    return rem == 0 ? n : MPI_UNDEFINED;
}


}  // namespace ftmpi::mpi
