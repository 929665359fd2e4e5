#pragma once
// The transport under a job's inter-process traffic: the platform's native one (RDMA: NCCL's IB
// verbs, RoCE; the link model alone), or TCP/IP over the same NIC (Ethernet, or InfiniBand as
// IPoIB). TCP costs host CPU for every byte: at the receiving end one core copies each byte out
// of the socket buffers and runs the protocol, so one stream (one connection, served by one
// core) moves at most 1 / (CPU time per byte), whatever the link could carry. Flows of a TCP
// stream carry that rate cap into SimGrid (Comm::set_rate), so a stream is the slower of its
// share of the route and its core. Constants and sources: transport.cpp and sim/README.md
// ("Transports").

#include <optional>
#include <string>
#include <string_view>

namespace scalecast::sim {

enum class Transport { kNative, kTcp };

std::string_view to_string(Transport t);
std::optional<Transport> parse_transport(std::string_view text);

struct TcpParams {
  // CPU time per payload byte of one stream at its receiving core (copy to user space and
  // protocol processing); 0 = free.
  double host_s_per_byte = 0.0;
  // The most one stream moves: 1 / host_s_per_byte (infinity when free).
  double stream_rate_Bps() const;
};

// TCP over a NIC technology (platforms/README.md, `nics.technology`): Ethernet ("25gbe",
// "ethernet", ...) and InfiniBand as IPoIB ("edr", "hdr200", ...) have the same receive-path
// cost per byte (the kernel's copy and protocol work; IPoIB has no TCP segmentation offload in
// datagram mode, so this is its best case). Throws std::invalid_argument for a technology that
// carries no TCP (e.g. "slingshot11" or "nvlink").
TcpParams tcp_params_for(const std::string& nic_technology);

// Bytes per second one receiving core sustains on one TCP stream: 42.2 Gbit/s, the single-flow
// measurement of Cai et al., "Understanding Host Network Stack Overheads", ACM SIGCOMM 2021,
// as its artifact's README reports it (Linux 5.4 with TSO/GRO, jumbo frames and aRFS on a
// 100 Gbit/s ConnectX-6: 42.200 Gbit/s at 100 % of one receiving core; the receiver's copy to
// user space is the bottleneck) [Cai-SIGCOMM21]. Without jumbo frames and aRFS the same flow
// moved 26.6 Gbit/s; either is above the 25 GbE links of the public set.
inline constexpr double kTcpSingleStreamBps = 42.2e9 / 8.0;

// Bytes per second of memory traffic one core streams: 20 GB/s, STREAM Triad (two reads and a
// write per element, the pattern of MPI's reduction) on one core of a Xeon E5-2697W v3
// (Haswell-EP, DDR4) [Puget-HaswellSTREAM]. Open MPI reduces in the calling rank's process,
// single-threaded, and Horovod's background thread copies its fusion buffer with one memcpy,
// so host-side MPI work runs at one core's rate however many channels the socket has. The
// figure is a Haswell-EP one, used for every CPU (the only mpi_cpu platform of the public set
// is of that generation); it was measured with non-temporal stores, so it is an upper bound for
// Open MPI's plain reduction loop.
inline constexpr double kOneCoreStreamBps = 20e9;

}  // namespace scalecast::sim
