#include "sim/flow_classes.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace scalecast::sim {
namespace {

// New dense colours from signatures: equal signatures, equal colour; numbered in sorted order.
std::vector<int> renumber(const std::vector<std::vector<std::uint64_t>>& signatures, int& count) {
  std::map<std::vector<std::uint64_t>, int> ids;
  for (const auto& s : signatures) ids.emplace(s, 0);
  int next = 0;
  for (auto& [s, id] : ids) id = next++;
  count = next;
  std::vector<int> out;
  out.reserve(signatures.size());
  for (const auto& s : signatures) out.push_back(ids.at(s));
  return out;
}

}  // namespace

FlowClasses equitable_classes(const FlowIncidence& in) {
  const std::size_t flows = in.routes.size(), links = in.link_colour.size();
  if (in.flow_colour.size() != flows)
    throw std::invalid_argument("flow classes: " + std::to_string(in.flow_colour.size()) +
                                " flow colours for " + std::to_string(flows) + " flows");
  // Links crossed by each flow and flows crossing each link, with multiplicity.
  std::vector<std::vector<int>> crossing(links);
  for (std::size_t f = 0; f < flows; ++f)
    for (int l : in.routes[f]) {
      if (l < 0 || static_cast<std::size_t>(l) >= links)
        throw std::invalid_argument("flow classes: flow " + std::to_string(f) + " crosses link " +
                                    std::to_string(l) + " of " + std::to_string(links));
      crossing[static_cast<std::size_t>(l)].push_back(static_cast<int>(f));
    }
  std::vector<std::size_t> used;  // links on some route
  for (std::size_t l = 0; l < links; ++l)
    if (!crossing[l].empty()) used.push_back(l);

  FlowClasses out;
  std::vector<std::vector<std::uint64_t>> sig;
  sig.reserve(flows);
  for (std::uint64_t c : in.flow_colour) sig.push_back({c});
  std::vector<int> fc = renumber(sig, out.flow_classes);
  sig.clear();
  for (std::size_t l : used) sig.push_back({in.link_colour[l]});
  std::vector<int> lc_used = renumber(sig, out.link_classes);
  std::vector<int> lc(links, -1);
  for (std::size_t i = 0; i < used.size(); ++i) lc[used[i]] = lc_used[i];

  // A signature: the own colour, then the sorted colours of the neighbours (with multiplicity).
  const auto signature = [](int own, const std::vector<int>& neighbours,
                            const std::vector<int>& colour) {
    std::vector<std::uint64_t> s;
    s.reserve(neighbours.size() + 1);
    for (int n : neighbours) s.push_back(static_cast<std::uint64_t>(colour[n]));
    std::sort(s.begin(), s.end());
    s.insert(s.begin(), static_cast<std::uint64_t>(own));
    return s;
  };
  // Refine links by the flows crossing them and flows by the links they cross until the number
  // of classes stops growing (a refinement never merges classes, so equal counts mean stable).
  for (;;) {
    ++out.rounds;
    sig.clear();
    for (std::size_t l : used) sig.push_back(signature(lc[l], crossing[l], fc));
    int link_count = 0;
    lc_used = renumber(sig, link_count);
    for (std::size_t i = 0; i < used.size(); ++i) lc[used[i]] = lc_used[i];
    sig.clear();
    for (std::size_t f = 0; f < flows; ++f) sig.push_back(signature(fc[f], in.routes[f], lc));
    int flow_count = 0;
    fc = renumber(sig, flow_count);
    const bool stable = flow_count == out.flow_classes && link_count == out.link_classes;
    out.flow_classes = flow_count;
    out.link_classes = link_count;
    if (stable) break;
  }
  out.flow_class = std::move(fc);
  out.link_class = std::move(lc);
  return out;
}

std::vector<double> max_min_rates(const FlowIncidence& in, const std::vector<double>& capacity,
                                  std::vector<bool>* saturated) {
  if (capacity.size() != in.link_colour.size())
    throw std::invalid_argument("max_min_rates: one capacity per link expected");
  for (double c : capacity)
    if (!(c > 0.0)) throw std::invalid_argument("max_min_rates: capacities must be > 0");
  for (const std::vector<int>& r : in.routes)
    for (int l : r)
      if (l < 0 || static_cast<std::size_t>(l) >= capacity.size())
        throw std::invalid_argument("max_min_rates: a route names a link out of range");
  const std::size_t flows = in.routes.size();
  std::vector<double> rate(flows, 0.0), left = capacity;
  std::vector<bool> frozen(flows, false);
  const auto full = [&](std::size_t l) { return left[l] <= 1e-9 * capacity[l]; };
  for (std::size_t done = 0; done < flows;) {
    std::vector<int> users(capacity.size(), 0);
    for (std::size_t f = 0; f < flows; ++f)
      if (!frozen[f])
        for (int l : in.routes[f]) ++users[static_cast<std::size_t>(l)];
    double step = std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < capacity.size(); ++l)
      if (users[l] > 0) step = std::min(step, left[l] / users[l]);
    if (!(step < std::numeric_limits<double>::infinity())) break;  // flows on no link
    for (std::size_t f = 0; f < flows; ++f)
      if (!frozen[f]) {
        rate[f] += step;
        for (int l : in.routes[f]) left[static_cast<std::size_t>(l)] -= step;
      }
    for (std::size_t f = 0; f < flows; ++f)
      if (!frozen[f])
        for (int l : in.routes[f])
          if (full(static_cast<std::size_t>(l))) {
            frozen[f] = true;
            ++done;
            break;
          }
  }
  if (saturated) {
    saturated->assign(capacity.size(), false);
    for (std::size_t l = 0; l < capacity.size(); ++l) (*saturated)[l] = full(l);
  }
  return rate;
}

}  // namespace scalecast::sim
