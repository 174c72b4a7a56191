// `ember`: the command-line tool of the Ember deep learning framework.
//
//   ember train [--model cnn|mlp] [--epochs N] ...   train into a run directory
//   ember eval RUN_DIR                               test accuracy and confusion matrix
//   ember infer RUN_DIR IMAGE...                     classify image files
//   ember summary RUN_DIR                            settings, metrics, checkpoints of a run
//   ember onnx inspect|run|convert MODEL ...          ONNX models (tools/ember/onnx.cpp)
//   ember launch --nproc N -- ember train ...        data-parallel processes (launch.cpp)
//
// Exit status: 0 on success, 1 when the command failed (one line on stderr saying why), 2 for
// bad command-line arguments.
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "launch.hpp"
#ifdef EMBER_HAVE_ONNX
#include "onnx_command.hpp"
#endif

namespace {

/// OpenMP threads that wait for work by spinning (libgomp's default) burn the cores the other
/// threads need as soon as the machine has other work (the data loader, other processes):
/// on a busy 2-core machine training ran 6x slower than with sleeping waits. libgomp reads
/// OMP_WAIT_POLICY once, when it is loaded (before main), so when it is unset the tool sets
/// it to "passive" and executes itself again. Setting OMP_WAIT_POLICY (to anything) keeps
/// the current process.
void prefer_passive_openmp_waits(int argc, char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  // `ember onnx` runs no loader threads: spinning waits make its kernels faster (as
  // onnxruntime's thread pool does).
  const bool onnx = argc > 1 && std::string(argv[1]) == "onnx";
  ::setenv("OMP_WAIT_POLICY", onnx ? "active" : "passive", 1);
  ::execv("/proc/self/exe", argv);  // returns only on failure: then run as we are
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ember::cli;
  prefer_passive_openmp_waits(argc, argv);
  set_command_line(argc, argv);
  CLI::App app{
      "ember: train, evaluate and run image classifiers with Ember (Fashion-MNIST by default)",
      "ember"};
  app.require_subcommand(1);
  app.fallthrough(false);
  TrainArgs train_args;
  EvalArgs eval_args;
  InferArgs infer_args;
  SummaryArgs summary_args;
  QuantizeArgs quantize_args;
  CLI::App* train = add_train_command(app, train_args);
  CLI::App* eval = add_eval_command(app, eval_args);
  CLI::App* infer = add_infer_command(app, infer_args);
  CLI::App* summary = add_summary_command(app, summary_args);
  CLI::App* quantize = add_quantize_command(app, quantize_args);
  LaunchArgs launch_args;
  CLI::App* launch = add_launch_command(app, launch_args);
#ifdef EMBER_HAVE_ONNX
  OnnxArgs onnx_args;
  CLI::App* onnx = add_onnx_command(app, onnx_args);
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string where = "ember";
    for (const CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
    std::cerr << where << ": error: " << e.what() << " (see `" << where << " --help`)\n";
    return 2;
  }

  std::string where = "ember";
  try {
    if (train->parsed()) {
      where = "ember train";
      return run_train(train_args, *train);
    }
    if (eval->parsed()) {
      where = "ember eval";
      return run_eval(eval_args);
    }
    if (infer->parsed()) {
      where = "ember infer";
      return run_infer(infer_args);
    }
    if (launch->parsed()) {
      where = "ember launch";
      return run_launch(launch_args);
    }
    if (quantize->parsed()) {
      where = "ember quantize";
      return run_quantize(quantize_args);
    }
    if (summary->parsed()) {
      where = "ember summary";
      return run_summary(summary_args);
    }
#ifdef EMBER_HAVE_ONNX
    if (onnx->parsed()) {
      where = "ember onnx " + onnx_args.action;
      return run_onnx(onnx_args);
    }
#endif
  } catch (const std::exception& e) {
    std::cerr << where << ": error: " << first_line(e.what()) << "\n";
    return 1;
  }
  return 1;
}
