#include "sim/transport.hpp"

#include <limits>
#include <stdexcept>

#include "platforms/node_type.hpp"

namespace scalecast::sim {

std::string_view to_string(Transport t) { return t == Transport::kTcp ? "tcp" : "native"; }

std::optional<Transport> parse_transport(std::string_view text) {
  if (text == "native") return Transport::kNative;
  if (text == "tcp") return Transport::kTcp;
  return std::nullopt;
}

double TcpParams::stream_rate_Bps() const {
  return host_s_per_byte > 0.0 ? 1.0 / host_s_per_byte : std::numeric_limits<double>::infinity();
}

TcpParams tcp_params_for(const std::string& technology) {
  if (!platforms::nic_carries_tcp(technology))
    throw std::invalid_argument("NIC technology \"" + technology +
                                "\" carries no TCP/IP here (expected Ethernet, e.g. 25gbe, or "
                                "InfiniBand for IPoIB, e.g. edr)");
  // One core's receive path, the same for both: the per-byte work is the kernel's copy and
  // protocol processing, not the link's (see transport.hpp). NCCL's socket transport is
  // NCCL's, not the link's, and so the same for both too.
  return TcpParams{1.0 / kTcpSingleStreamBps, kNcclSocketLinkFraction};
}

}  // namespace scalecast::sim
