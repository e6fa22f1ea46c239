// The trained parameters (parameters.hpp): the drawn network with gains 1 and biases 0.
#include "core/train/parameters.hpp"

#include <algorithm>

namespace maskscope::train {

Network initial_network(const Settings& s) {
  Network net = *fixed_network(s);
  const std::size_t d = std::size_t(s.d);
  const bool gain = norm_has_gain(s.norm), bias = norm_has_bias(s.norm);
  auto ones = [&](std::vector<float>& v, bool present) { v.assign(present ? d : 0, 1.0f); };
  for (Network::Block& b : net.blocks) {
    ones(b.ln1_gain, gain);
    b.ln1_bias.assign(bias ? d : 0, 0.0f);
    b.bqkv.assign(3 * d, 0.0f);
    b.bo.assign(d, 0.0f);
    if (s.mlp) {
      ones(b.ln2_gain, gain);
      b.ln2_bias.assign(bias ? d : 0, 0.0f);
      b.b1.assign(4 * d, 0.0f);
      b.b2.assign(d, 0.0f);
    }
  }
  ones(net.lnf_gain, gain);
  net.lnf_bias.assign(bias ? d : 0, 0.0f);
  net.activation = Activation::gelu_erf;
  return net;
}

Network zeros_like(const Network& like) {
  Network z = like;
  for_each_tensor(z, [](const std::string&, std::vector<float>& v, bool) { std::fill(v.begin(), v.end(), 0.0f); });
  return z;
}

std::size_t parameter_count(const Network& net) {
  std::size_t count = 0;
  for_each_tensor(net, [&](const std::string&, const std::vector<float>& v, bool) { count += v.size(); });
  return count;
}

}  // namespace maskscope::train
