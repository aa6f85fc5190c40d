// The Prometheus side: one registry of stepscope_* families (base units,
// `_total` counters, labels gpu / uuid / hostname / job) updated from each
// sampling pass and the training state, served on /metrics by
// prometheus-cpp's embedded HTTP server.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "monitor/gpu_sample.h"
#include "monitor/host_port.h"
#include "monitor/training_state.h"

namespace prometheus {
class Collectable;
class Registry;
class Exposer;
}  // namespace prometheus

namespace stepscope::monitor {

struct ExporterFamilies;

class Exporter {
 public:
  Exporter(std::string hostname, std::string job);
  ~Exporter();
  // Serves /metrics on `where`; false with `error` (one line naming the
  // address and the reason) when it cannot.
  bool listen(const HostPort& where, std::string& error);
  int port() const;  // the bound port (useful with port 0)

  void set_nvml_status(bool loaded, int gpus);
  // Scrapes (and render()) wait while the returned lock is held. The service
  // holds it while it writes one sampling pass, so every scrape shows whole
  // passes: without it a scrape that lands mid-pass mixes GPUs of two passes
  // (prometheus-cpp locks each family on its own, not the registry).
  [[nodiscard]] std::unique_lock<std::mutex> hold_scrapes() { return std::unique_lock(*pass_mu_); }
  void update_gpus(const Sample& s);
  void update_training(const TrainingSnapshot& t, std::optional<double> mfu);
  void update_alerts(const std::vector<std::pair<std::string, int>>& firing);
  // The exposition text, as a scrape would return it.
  std::string render() const;
  // The metric names this exporter can emit (for the dashboard check).
  static std::vector<std::string> metric_names();

 private:
  std::string hostname_, job_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<std::mutex> pass_mu_ = std::make_shared<std::mutex>();
  // What the HTTP server reads (it keeps only a weak reference): the registry
  // under pass_mu_. Declared before exposer_ so it outlives the server.
  std::shared_ptr<prometheus::Collectable> scrape_view_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::unique_ptr<ExporterFamilies> f_;
  // Last raw value of device-side cumulative counters, to add deltas.
  std::map<std::pair<std::string, int>, double> raw_;
  std::map<std::string, double> train_raw_;
};

}  // namespace stepscope::monitor
