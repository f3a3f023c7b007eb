// xstage cli layer: the `moe` subcommand of xstage-predict, the MegaMoE schedule advisor (paper sections 4.2,
// 6.3): flags into moe::advise, whose rows xstage_predict.cpp prints like every other subcommand's report.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "xs/cli/common/options.hpp"
#include "xs/moe/advisor/moe_advisor.hpp"

namespace xs::cli {

struct PredictMoeOptions {
  PlatformFlags platform;
  std::string shape, models_file = "configs/moe/models.json", precision = "bf16", routing = "skewed";
  std::string target, from_run;
  std::optional<long long> hidden, intermediate, experts, top_k, tokens, ranks, num_sms, block_n, routing_seed;
  std::optional<double> alpha, gain, tensor_tflops;
  bool json = false;
};

void add_predict_moe(CLI::App& app, PredictMoeOptions& o);
// Resolves shape, platform and throughput, runs the advisor; input_error (exit 2) naming the flag otherwise.
std::vector<moe::AdvisorRow> run_predict_moe(const PredictMoeOptions& o);

}  // namespace xs::cli
