// `ember onnx inspect|run|convert`: ONNX models from the command line.
//
//   ember onnx inspect model.onnx                      inputs, outputs, opsets, operators, params
//   ember onnx run model.onnx --input x=x.npy [--device cpu] [--out-dir DIR]
//   ember onnx convert model.onnx --out DIR [--name Name] [--namespace ns]
#ifdef EMBER_HAVE_ONNX

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>

#include "ember/onnx/codegen.hpp"
#include "ember/onnx/model.hpp"
#include "ember/onnx/npy.hpp"
#include "ember/onnx/runtime.hpp"
#include "onnx_command.hpp"

namespace ember::cli {

CLI::App* add_onnx_command(CLI::App& app, OnnxArgs& args) {
  CLI::App* onnx = app.add_subcommand("onnx", "Inspect, run or convert ONNX models");
  onnx->require_subcommand(1);
  CLI::App* inspect =
      onnx->add_subcommand("inspect", "Inputs, outputs, opsets, operators and parameter count");
  inspect->add_option("model", args.model, "the .onnx file")->required()->check(CLI::ExistingFile);
  inspect->callback([&args] { args.action = "inspect"; });
  CLI::App* run =
      onnx->add_subcommand("run", "Run a model on .npy inputs; outputs are written as .npy");
  run->add_option("model", args.model, "the .onnx file")->required()->check(CLI::ExistingFile);
  run->add_option(
         "-i,--input", args.inputs,
         "NAME=FILE.npy (one per graph input; the name may be left out for a single input)")
      ->required();
  run->add_option("--device", args.device,
                  "device: cpu, cpu+autodiff, ... (default: EMBER_DEVICE or the best)");
  run->add_option("--out-dir", args.out_dir, "folder for <output name>.npy files")
      ->capture_default_str();
  run->add_option("--threads", args.threads, "CPU threads (default: all cores)")
      ->check(whole_number_in(0, 4096));
  run->add_option("--repeat", args.repeat,
                  "run N times (after one warm-up run) and print the mean and best time")
      ->capture_default_str()
      ->check(whole_number_in(1, 1000000));
  run->callback([&args] { args.action = "run"; });
  CLI::App* convert =
      onnx->add_subcommand("convert", "Write a C++ EMBER_MODULE header and safetensors weights");
  convert->add_option("model", args.model, "the .onnx file")->required()->check(CLI::ExistingFile);
  convert->add_option("-o,--out", args.out_dir, "output folder")->required();
  convert->add_option("--name", args.name, "struct name (default: from the file name)");
  convert->add_option("--namespace", args.name_space, "C++ namespace")->capture_default_str();
  convert->callback([&args] { args.action = "convert"; });
  return onnx;
}

namespace {

std::string file_name(const std::string& s) {
  std::string out;
  for (char c : s)
    out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_');
  return out.empty() ? "output" : out;
}

int inspect(const OnnxArgs& args) {
  const onnx::Model m = onnx::load_model(args.model);
  std::cout << "model      " << args.model << "\n"
            << "ir_version " << m.ir_version << "\n"
            << "producer   " << (m.producer.empty() ? "-" : m.producer) << "\n"
            << "opsets    ";
  for (const auto& o : m.opsets)
    std::cout << " " << (o.domain.empty() ? "ai.onnx" : o.domain) << ":" << o.version;
  std::cout << "\ninputs\n";
  for (const auto& i : m.graph.inputs)
    std::cout << "  " << i.name << ": " << onnx::type_string(i.type) << "\n";
  std::cout << "outputs\n";
  for (const auto& o : m.graph.outputs)
    std::cout << "  " << o.name << ": " << onnx::type_string(o.type) << "\n";
  std::map<std::string, int> ops;
  for (const auto& n : m.graph.nodes) ++ops[(n.domain.empty() ? "" : n.domain + "::") + n.op_type];
  std::cout << "operators (" << m.graph.nodes.size() << " nodes after constant folding)\n";
  for (const auto& [op, n] : ops)
    std::cout << "  " << std::left << std::setw(28) << op << n << "\n";
  std::cout << "initializers " << m.graph.initializers.size() << "\nparameters   " << m.num_params()
            << "\n";
  return 0;
}

int run(const OnnxArgs& args) {
  const Device dev = args.device.empty() ? Device{} : Device::parse(args.device);
  set_threads(dev, args.threads);
  const onnx::Model m = onnx::load_model(args.model);
  std::map<std::string, onnx::Value> in;
  for (const auto& spec : args.inputs) {
    const auto eq = spec.find('=');
    std::string name, file;
    if (eq == std::string::npos) {
      if (m.graph.inputs.size() != 1)
        throw CliError("--input " + spec + ": give NAME=FILE (the model has " +
                       std::to_string(m.graph.inputs.size()) + " inputs)");
      name = m.graph.inputs[0].name, file = spec;
    } else {
      name = spec.substr(0, eq), file = spec.substr(eq + 1);
    }
    in[name] = onnx::read_npy(file, dev);
  }
  onnx::Session session(m, {.device = dev});
  std::map<std::string, onnx::Value> out;
  if (args.repeat > 1) out = session.run(in);  // warm-up (allocations, oneDNN primitives)
  double total = 0, best = 1e300;
  for (int k = 0; k < std::max(1, args.repeat); ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    out = session.run(in);
    const double t =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    total += t;
    best = std::min(best, t);
  }
  const double ms = total / std::max(1, args.repeat);
  std::filesystem::create_directories(args.out_dir);
  for (const auto& o : m.graph.outputs) {
    const onnx::Value& v = out.at(o.name);
    const std::string path =
        (std::filesystem::path(args.out_dir) / (file_name(o.name) + ".npy")).string();
    if (v.is_tensor() && v.type() != onnx::ElemType::String) {
      onnx::write_npy(path, v);
      std::cout << o.name << ": " << v.describe() << " -> " << path << "\n";
    } else {
      std::cout << o.name << ": " << v.describe() << " (not written)\n";
    }
  }
  std::cout << "time " << std::fixed << std::setprecision(2) << ms << " ms per run on "
            << dev.to_string() << " (best " << best << " ms)\n";
  return 0;
}

int convert(const OnnxArgs& args) {
  const onnx::Model m = onnx::load_model(args.model);
  const auto r = onnx::convert(m, args.out_dir, {.name = args.name, .name_space = args.name_space});
  std::cout << "wrote " << r.header << " (struct " << args.name_space << "::" << r.struct_name
            << ") and " << r.weights << "\n";
  return 0;
}

}  // namespace

int run_onnx(const OnnxArgs& args) {
  if (args.action == "inspect") return inspect(args);
  if (args.action == "run") return run(args);
  if (args.action == "convert") return convert(args);
  throw CliError("ember onnx: give a subcommand (inspect, run, convert)");
}

}  // namespace ember::cli

#endif  // EMBER_HAVE_ONNX
