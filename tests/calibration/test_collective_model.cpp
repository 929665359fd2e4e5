// NCCL's tuning model (calibration/collective_model.hpp) against closed-form times written out
// from NCCL v2.21.5-1 src/graph/tuning.cc, its choices on shipped platforms, and measured
// all-reduces from a synthetic calibration database taking the place of the datasheet terms.

#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "calibration/collective_model.hpp"
#include "platforms/platform.hpp"

using namespace scalecast::calibration;

namespace {

// One DGX H100 as NCCL sees it: Hopper, 18 NVLink 4 links through NVSwitch (450 GB/s per
// direction), NVLS, 8 NDR NICs of 50 GB/s behind PCIe switches.
NcclTopology dgx_h100(int nodes) {
  NcclTopology t;
  t.nodes = nodes;
  t.ranks = 8 * nodes;
  t.compute_capability = 90;
  t.nvlink = t.nvswitch = t.nvls = t.nic_near_gpu = true;
  t.intra_bw_GBps = 450.0;
  t.inter_bw_GBps = 400.0;
  t.channels = 16;
  return t;
}

constexpr double kGiB = 1024.0 * 1024 * 1024;

// Relative comparison: doctest's Approx adds 1 to the scale, which would let microseconds pass
// for anything.
doctest::Approx rel(double expected, double epsilon = 1e-6) {
  return doctest::Approx(expected).scale(0).epsilon(epsilon);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("collective model: one DGX H100 matches NCCL's closed-form ring, LL and NVLS terms") {
    const CollectiveModel m(dgx_h100(1));
    // Ring Simple: busBw 450 -> algBw 450 * 8 / 14; latency 8.4 + 14 * 3.4 us.
    const CollectiveChoice ring = m.datasheet(NcclAlgo::kRing, NcclProto::kSimple, kGiB);
    const double ring_expected = 56.0e-6 + kGiB / (450e9 * 8 / 14);
    INFO("ring simple expected ", ring_expected, " actual ", ring.time_s);
    CHECK(ring.latency_s == rel(56.0e-6));
    CHECK(ring.time_s == rel(ring_expected, 1e-9));
    // Ring LL: min(llMaxBw 141, 450 * 0.5) -> 141 * 8 / 14; latency 6.6 + 14 * 0.6.
    const CollectiveChoice ll = m.datasheet(NcclAlgo::kRing, NcclProto::kLL, 8);
    CHECK(ll.bandwidth_Bps == rel(141e9 * 8 / 14));
    CHECK(ll.latency_s == rel(15.0e-6));
    CHECK(ll.efficiency == 0.5);
    // Ring LL128: min(450 * 0.92, 16 * 36.7) * 8 / 14; latency 14 + 14 * 1.9.
    const CollectiveChoice ll128 = m.datasheet(NcclAlgo::kRing, NcclProto::kLL128, kGiB);
    CHECK(ll128.bandwidth_Bps == rel(414e9 * 8 / 14));
    CHECK(ll128.latency_s == rel(40.6e-6));
    CHECK(ll128.efficiency == rel(120.0 / 128.0));
    // NVLS: 450 * 5/6, latency hwLat[NVLink][NVLS][Simple] = 25 us (no base latency).
    const CollectiveChoice nvls = m.datasheet(NcclAlgo::kNvls, NcclProto::kSimple, kGiB);
    CHECK(nvls.time_s == rel(25e-6 + kGiB / 375e9, 1e-9));
    // Tree on one node: latency 6.8 + 2 * 7 * 0.6 = 15.2 us > ring LL's 15.0 us.
    CHECK(m.datasheet(NcclAlgo::kTree, NcclProto::kLL, 8).latency_s == rel(15.2e-6));
  }

  // The LLM job's reduce-scatters and all-gathers (nccl_ring_choice): tuning.cc's ring terms
  // with nRanks - 1 steps, nNodes - 1 of them between nodes.
  TEST_CASE("collective model: NCCL's ring reduce-scatter and all-gather terms") {
    const NcclTopology one = dgx_h100(1);
    // 1 KiB on one node: LL, 6.6 + 7 x 0.6 us; time adds 1 KiB at 141 x 8 / 7 GB/s.
    const NcclRingChoice rs = nccl_ring_choice(one, NcclRingCollective::kReduceScatter, 1024);
    CHECK(rs.proto == NcclProto::kLL);
    CHECK(rs.latency_s == rel(10.8e-6));
    CHECK(rs.efficiency == 0.5);
    CHECK(rs.time_s == rel(10.8e-6 + 1024 / (141e9 * 8 / 7)));
    CHECK(nccl_ring_choice(one, NcclRingCollective::kAllGather, 1024).time_s == rel(rs.time_s));
    // The all-reduce: 14 steps, 15.0 us, as CollectiveModel's ring.
    CHECK(nccl_ring_choice(one, NcclRingCollective::kAllReduce, 1024).latency_s == rel(15.0e-6));
    // 1 GiB: Simple, 8.4 + 7 x 3.4 us at 450 x 8 / 7 GB/s.
    const NcclRingChoice big = nccl_ring_choice(one, NcclRingCollective::kAllGather, kGiB);
    CHECK(big.proto == NcclProto::kSimple);
    CHECK(big.time_s == rel(32.2e-6 + kGiB / (450e9 * 8 / 7), 1e-9));
    // Two nodes, 1 KiB: 16 ranks, 15 steps of which 1 between nodes (LL: 2.7 us), the other 14 at
    // max(0.6, 1 us network post overhead): 6.6 + 14 + 2.7 us.
    CHECK(nccl_ring_choice(dgx_h100(2), NcclRingCollective::kReduceScatter, 1024).latency_s ==
          rel(23.3e-6));
    // Nothing to do for one rank or no bytes.
    NcclTopology single = one;
    single.ranks = 1;
    CHECK(nccl_ring_choice(single, NcclRingCollective::kAllGather, kGiB).time_s == 0.0);
    CHECK(nccl_ring_choice(one, NcclRingCollective::kAllGather, 0.0).time_s == 0.0);
  }

  TEST_CASE("collective model: NCCL's choice moves from ring/LL to LL128 to NVLS with size") {
    const CollectiveModel m(dgx_h100(1));
    const CollectiveChoice small = m.choose(8);
    CHECK(to_string(small.algo) == "ring");
    CHECK(to_string(small.proto) == "ll");
    const CollectiveChoice large = m.choose(kGiB);
    CHECK(to_string(large.algo) == "nvls");
    CHECK(to_string(large.proto) == "simple");
    CHECK(large.tier == CollectiveTier::kDatasheet);
    // Every choice is the least time of the candidates.
    for (double bytes : {8.0, 4096.0, 1048576.0, 64.0 * (1 << 20), kGiB}) {
      const CollectiveChoice c = m.choose(bytes);
      for (const CollectiveChoice& other : m.candidates(bytes)) CHECK(c.time_s <= other.time_s);
    }
    // Restricted like NCCL_ALGO / NCCL_PROTO.
    CHECK(to_string(m.choose(kGiB, NcclAlgo::kRing).proto) == "simple");
    CHECK(to_string(m.choose(kGiB, std::nullopt, NcclProto::kLL).algo) == "ring");
  }

  TEST_CASE("collective model: multi-node tree and ring latencies, plateau and tree correction") {
    const CollectiveModel m(dgx_h100(16));  // 128 ranks
    // Tree Simple: 2 * ((8 - 1) * 28 + log2(16) * 28) us = 616 us, base 0.
    CHECK(m.datasheet(NcclAlgo::kTree, NcclProto::kSimple, 64).latency_s == rel(616e-6));
    // Ring LL across nodes: 6.6 + (254 - 32) * max(0.6, 1 us net overhead) + 32 * 2.7 us.
    CHECK(m.datasheet(NcclAlgo::kRing, NcclProto::kLL, 8).latency_s ==
          rel((6.6 + 222 * 1.0 + 32 * 2.7) * 1e-6));
    // Ring Simple: (8.4 + 222 * max(3.4, 3 x 1 us net overhead) + 32 * 14) us, x1.4 (Hopper
    // plateau) once >= 64 B per channel and rank.
    const double simple_us = 8.4 + 222 * 3.4 + 32 * 14.0;
    CHECK(m.datasheet(NcclAlgo::kRing, NcclProto::kSimple, 64).latency_s == rel(simple_us * 1e-6));
    CHECK(m.datasheet(NcclAlgo::kRing, NcclProto::kSimple, 16 * 128 * 64).latency_s ==
          rel(1.4 * simple_us * 1e-6));
    // Tree Simple bandwidth: min(400 * 0.92, 16 * 36.0) * 0.5, times the size correction at
    // 2^17 B (index log2(2^17 / 64) = 11: .5 for Simple).
    const CollectiveChoice t = m.datasheet(NcclAlgo::kTree, NcclProto::kSimple, 1 << 17);
    CHECK(t.bandwidth_Bps == rel(368e9 * 0.5 * 0.5));
    // No SHARP: CollNet and multi-node NVLS are off; NVLS tree is on.
    for (const CollectiveChoice& c : m.candidates(kGiB)) {
      CHECK(c.algo != NcclAlgo::kCollNetDirect);
      CHECK(c.algo != NcclAlgo::kNvls);
    }
    NcclTopology sharp = dgx_h100(16);
    sharp.collnet = true;
    const CollectiveModel with_sharp(sharp);
    bool collnet = false;
    for (const CollectiveChoice& c : with_sharp.candidates(kGiB))
      collnet = collnet || c.algo == NcclAlgo::kCollNetDirect;
    CHECK(collnet);
  }

  TEST_CASE("collective model: unavailable algorithm is a clear error") {
    NcclTopology v100 = dgx_h100(1);
    v100.compute_capability = 70;
    v100.nvswitch = v100.nvls = false;
    const CollectiveModel m(v100);
    CHECK_THROWS_WITH_AS(
        m.choose(kGiB, NcclAlgo::kNvls),
        doctest::Contains("all-reduce algorithm nvls with protocol auto is not "
                          "available on this machine (8 ranks on 1 nodes, NVLS no"),
        std::invalid_argument);
  }

  TEST_CASE("collective model: topology of shipped platforms") {
    const auto h100 = scalecast::platforms::load_platform("dgx-h100-superpod");
    const NcclTopology one = nccl_topology(h100, h100.node_types[0], 1, 8, false);
    CHECK(one.compute_capability == 90);
    CHECK(one.nvls);
    // network.sharp: true, but NCCL runs CollNet only with NCCL_COLLNET_ENABLE=1
    CHECK_FALSE(one.collnet);
    CHECK(nccl_topology(h100, h100.node_types[0], 1, 8, true).collnet);
    CHECK(one.intra_bw_GBps == rel(450.0));
    CHECK(one.channels == 16);
    const NcclTopology many = nccl_topology(h100, h100.node_types[0], 32, 8, false);
    CHECK(many.inter_bw_GBps == rel(400.0));
    CHECK(many.nic_near_gpu);
    const auto summit = scalecast::platforms::load_platform("summit");
    const NcclTopology s = nccl_topology(summit, summit.node_types[0], 4, 6, true);
    CHECK(s.compute_capability == 70);
    CHECK(s.power_cpu);
    CHECK_FALSE(s.nvls);
    CHECK_FALSE(s.collnet);  // enabled, but Summit's fabric declares no SHARP
  }

  TEST_CASE("collective model: SHARP in the fabric is used only when CollNet is enabled") {
    // NCCL v2.21.5-1 src/init.cc sets collNetSupport only with NCCL_COLLNET_ENABLE=1: on 32 DGX
    // H100 of the SuperPOD (network.sharp: true) no size picks CollNet or multi-node NVLS by
    // default; enabled, the large sizes do.
    const auto h100 = scalecast::platforms::load_platform("dgx-h100-superpod");
    const CollectiveModel off(nccl_topology(h100, h100.node_types[0], 32, 8, false));
    const CollectiveModel on(nccl_topology(h100, h100.node_types[0], 32, 8, true));
    bool in_network_on = false;
    for (double bytes = 8; bytes <= 4.0 * kGiB; bytes *= 8) {
      CAPTURE(bytes);
      const NcclAlgo a = off.choose(bytes).algo;
      CHECK(a != NcclAlgo::kCollNetDirect);
      CHECK(a != NcclAlgo::kCollNetChain);
      CHECK(a != NcclAlgo::kNvls);
      const NcclAlgo b = on.choose(bytes).algo;
      in_network_on = in_network_on || b == NcclAlgo::kCollNetDirect ||
                      b == NcclAlgo::kCollNetChain || b == NcclAlgo::kNvls;
    }
    CHECK(in_network_on);
    CHECK_THROWS_AS(off.choose(kGiB, NcclAlgo::kCollNetDirect), std::invalid_argument);
  }

  TEST_CASE("collective model: measured all-reduces replace the datasheet terms (synthetic db)") {
    // t = 20 us + S / 200 GB/s for ring on 8 ranks of one node, 4 sizes.
    std::string text =
        "format: scalecast-calibration\nversion: 1\nsources:\n"
        "  - {id: s, device: h100-sxm5, backend: cuda, date: \"2026-01-01\"}\nentries:\n";
    for (double bytes : {1e6, 1e7, 1e8, 1e9})
      text +=
          "  - {source: s, device: h100-sxm5, op: collective, pass: all_reduce, dtype: fp32, "
          "select: fixed, dims: {bytes: " +
          std::to_string(static_cast<long long>(bytes)) +
          ", ranks: 8}, median_s: " + std::to_string(20e-6 + bytes / 200e9) + ", algo: ring}\n";
    const Database db = parse_database(text, "synthetic.yaml");
    CollectiveModel m(dgx_h100(1));
    const CollectiveChoice before = m.choose(kGiB, NcclAlgo::kRing);
    CHECK(m.use_measurements(db, "h100-sxm5") == 1);
    const CollectiveChoice after = m.choose(kGiB, NcclAlgo::kRing);
    CHECK(before.tier == CollectiveTier::kDatasheet);
    CHECK(after.tier == CollectiveTier::kMeasured);
    INFO("measured expected ", 20e-6 + kGiB / 200e9, " actual ", after.time_s);
    CHECK(after.time_s == rel(20e-6 + kGiB / 200e9, 1e-3));
    CHECK(after.time_s > 1.2 * before.time_s);  // 200 GB/s measured vs 257 GB/s datasheet
    // Efficiency relative to the datasheet Simple ring bandwidth the flows would reach.
    CHECK(after.efficiency == rel(200e9 / (450e9 * 8 / 14), 1e-3));
    // Another device or rank count is untouched.
    CollectiveModel other(dgx_h100(2));
    CHECK(other.use_measurements(db, "h100-sxm5") == 0);
    CHECK(other.choose(kGiB).tier == CollectiveTier::kDatasheet);
  }
}
