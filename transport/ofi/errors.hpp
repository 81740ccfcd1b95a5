// The one place where libfabric error numbers become transport errors.
#pragma once

#include "transport/transport.hpp"

namespace ftmpi::transport::ofi {

// `fi_errno` is a positive FI_E* / errno value (fi_cq_err_entry::err, or -rc).
// Every connection-loss code collapses to Err::peer_failed.
Err map_fi_error(int fi_errno);

}  // namespace ftmpi::transport::ofi
