// The fused block's description (ember/ir/fused.hpp).
#include "ember/ir/fused.hpp"

#include <array>
#include <sstream>

namespace ember::ir {

namespace {
template <class... Ops>
constexpr std::array<const char*, sizeof...(Ops)> row_names(TypeList<Ops...>) {
  return {Ops::name...};
}
constexpr auto kRowNames = row_names(ElementwiseOps{});
}  // namespace

const char* row_name(std::uint16_t row) {
  return row < kRowNames.size() ? kRowNames[row] : "?";
}

std::string FusedBlock::describe() const {
  std::ostringstream os;
  os << dtype_name(dtype) << ' ' << shape.to_string() << " in=" << inputs << ':';
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const FusedStep& s = steps[i];
    os << " s" << inputs + i << '=';
    switch (s.kind) {
      case FusedKind::Unary:
        os << row_name(s.row) << "(s" << s.a << ')';
        break;
      case FusedKind::Binary:
        os << row_name(s.row) << "(s" << s.a << ", s" << s.b << ')';
        break;
      case FusedKind::Scalar:
        os << row_name(s.row) << "(s" << s.a << ", " << s.s0 << ')';
        break;
      case FusedKind::Clamp:
        os << "clamp(s" << s.a << ", " << s.s0 << ", " << s.s1 << ')';
        break;
    }
  }
  os << " out=";
  for (std::size_t i = 0; i < outputs.size(); ++i)
    os << (i ? "," : "") << 's' << inputs + outputs[i];
  return os.str();
}

}  // namespace ember::ir
