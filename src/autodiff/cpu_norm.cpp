// Autodiff<Cpu>: training batch norm with Cpu's fused kernels.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

namespace ember::autodiff {
template auto AdOps<Cpu>::float_batch_norm_train(const AP&, const OptAP&, const OptAP&, double)
    -> std::pair<AP, AP>;
}  // namespace ember::autodiff
