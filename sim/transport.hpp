#pragma once
// The transport under a job's inter-process traffic: the platform's native one (RDMA: NCCL's IB
// verbs, RoCE; the link model alone), or TCP/IP over the same NIC (Ethernet, or InfiniBand as
// IPoIB). TCP costs host CPU for every byte: at the receiving end one core copies each byte out
// of the socket buffers and runs the protocol, so one stream (one connection, served by one
// core) moves at most 1 / (CPU time per byte), whatever the link could carry. Flows of a TCP
// stream carry that rate cap into SimGrid (Comm::set_rate), so a stream is the slower of its
// share of the route and its core. NCCL's collectives over TCP (its socket transport) move
// a smaller share of each NIC's rate than over RDMA (nccl_link_fraction). Constants and sources:
// transport.cpp and sim/README.md ("Transports").

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
  // The fraction of a NIC's rate NCCL's socket transport moves through it (its all-reduce bus
  // bandwidth over the link's rate, kNcclSocketLinkFraction); 1 = the link's full rate.
  double nccl_link_fraction = 1.0;
  // What an NCCL flow between nodes carries per payload byte: 1 / nccl_link_fraction.
  double nccl_flow_factor() const { return 1.0 / nccl_link_fraction; }
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

// The share of a NIC's rate that NCCL's collectives reach over its socket transport (NCCL_NET
// Socket: the GPU's data staged in host memory, a proxy thread per GPU sending and receiving on
// TCP sockets): 0.53, the mean of two measured all-reduce bus bandwidths, which in a ring
// with one NIC per node is what each NIC carries:
//   - 2.06 GB/s on a 32 Gbit/s network, 0.515 of the link (NCCL 2.3.7, one ring, nccl-tests
//     all_reduce_perf at large sizes; "not ... more than 60% of wire speed over 32Gbps
//     networks" with any setting then) [NCCL-issue209];
//   - 1.7 GB/s on a 25 Gbit/s network whose TCP streams carried 25 Gbit/s one way and 21 both
//     ways (ntttcp), 0.544 of the link (NCCL 2.9.6, 2 channels, socket threads and sockets per
//     thread raised; "maxed out at 1.7GBps") [NCCL-tests-issue83].
// The same reporter's 8 rings under NCCL 2.3.7 reached 3.75 GB/s (0.94), and NCCL 2.4.2
// lost bandwidth with more rings (1.85 GB/s at 1, 1.45 at 8) [NCCL-issue209]: the fraction is
// that of one or two channels per NIC, what the engine takes NCCL to run over sockets
// [assumption: NCCL's socket channel count is not modelled]. It binds as a per-NIC rate, not per
// stream: every flow of an NCCL collective between two nodes holds its route 1 / 0.53 times as long
// as its bytes need at the links' rates (job_collectives.cpp).
inline constexpr double kNcclSocketLinkFraction = (0.515 + 0.544) / 2.0;

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
