#include "sim/transport.hpp"

#include <limits>
#include <stdexcept>

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
  const auto ends_with = [&](std::string_view s) {
    return technology.size() >= s.size() &&
           technology.compare(technology.size() - s.size(), s.size(), s) == 0;
  };
  const bool ethernet = technology == "ethernet" || ends_with("gbe") || ends_with("roce");
  const bool infiniband = technology == "edr" || technology == "fdr" || technology == "qdr" ||
                          technology.starts_with("hdr") || technology.starts_with("ndr") ||
                          technology.starts_with("xdr");
  if (!ethernet && !infiniband)
    throw std::invalid_argument("NIC technology \"" + technology +
                                "\" carries no TCP/IP here (expected Ethernet, e.g. 25gbe, or "
                                "InfiniBand for IPoIB, e.g. edr)");
  // One core's receive path, the same for both: the per-byte work is the kernel's copy and
  // protocol processing, not the link's (see transport.hpp). NCCL's socket transport is
  // NCCL's, not the link's, and so the same for both too.
  return TcpParams{1.0 / kTcpSingleStreamBps, kNcclSocketLinkFraction};
}

}  // namespace scalecast::sim
