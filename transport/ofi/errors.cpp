#include "transport/ofi/errors.hpp"

#include <rdma/fi_errno.h>

namespace ftmpi::transport::ofi {

Err map_fi_error(int fi_errno) {
    switch (fi_errno) {
    case 0: return Err::ok;
    case FI_EIO:
    case FI_ECONNRESET:
    case FI_ECONNABORTED:
    case FI_ECONNREFUSED:
    case FI_ENOTCONN:
    case FI_ETIMEDOUT:
    case FI_EHOSTUNREACH:
    case FI_ENETUNREACH:
    case FI_ENETDOWN:
    case FI_EADDRNOTAVAIL:
    case FI_ESHUTDOWN: return Err::peer_failed;
    case FI_ETRUNC:
    case FI_ETOOSMALL: return Err::truncated;
    case FI_ECANCELED: return Err::canceled;
    default: return Err::other;
    }
}

}  // namespace ftmpi::transport::ofi
