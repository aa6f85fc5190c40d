#include "monitor/gpu_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "monitor/fake_nvml_env.h"

namespace stepscope::monitor {
namespace {

using testing::fake_nvml_path;
using testing::FakeNvml;

struct Logged {
  std::vector<std::string> lines;
  GpuSampler::Logger logger() {
    return [this](const std::string& l) { lines.push_back(l); };
  }
  int count(const std::string& needle) const {
    return static_cast<int>(std::count_if(lines.begin(), lines.end(),
                                          [&](const std::string& l) { return l.find(needle) != std::string::npos; }));
  }
};

TEST(GpuSampler, ReadsEveryValueInBaseUnits) {
  FakeNvml fake(
      "gpus 2\nname NVIDIA H200\nutil 87\nmem_util 40\nmemory_total 150000000000\nmemory_used 30000000000\n"
      "power_mw 512000\nenergy_mj 9000000\nsm_clock 1980\nmem_clock 2619\ntemp 61\npcie_rx_kbps 2000\n"
      "pcie_tx_kbps 1000\nnvlink_rx_kib 4\nnvlink_tx_kib 8\necc_corrected 3\necc_uncorrected 1\nthrottle 0x24\n"
      "gpm 1\nsm_active 75\nsm_occupancy 30\ntensor_active 50\ndram_active 20\n"
      "gpu.1.util 10\ngpu.1.process 4242 2000000000\ngpu.1.process 4343 1000\n");
  Logged log;
  GpuSampler s(fake_nvml_path(), log.logger());
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_EQ(s.gpu_count(), 2);
  EXPECT_EQ(s.gpu_name(0), "NVIDIA H200");
  // GPM values are rates between two samples: none right after start-up.
  EXPECT_FALSE(s.sample().gpus[0].sm_active_ratio.has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  Sample out = s.sample();
  ASSERT_EQ(out.gpus.size(), 2u);
  EXPECT_TRUE(out.errors.empty()) << out.errors[0].query << " " << out.errors[0].error;
  const GpuSample& g = out.gpus[0];
  EXPECT_EQ(g.uuid, "GPU-fake-0");
  EXPECT_DOUBLE_EQ(*g.utilization_ratio, 0.87);
  EXPECT_DOUBLE_EQ(*g.memory_copy_ratio, 0.40);
  EXPECT_DOUBLE_EQ(*g.memory_total_bytes, 150e9);
  EXPECT_DOUBLE_EQ(*g.memory_used_bytes, 30e9);
  EXPECT_DOUBLE_EQ(*g.power_watts, 512.0);
  EXPECT_DOUBLE_EQ(*g.energy_joules, 9000.0);
  EXPECT_DOUBLE_EQ(*g.sm_clock_hertz, 1.98e9);
  EXPECT_DOUBLE_EQ(*g.memory_clock_hertz, 2.619e9);
  EXPECT_DOUBLE_EQ(*g.temperature_celsius, 61);
  EXPECT_DOUBLE_EQ(*g.pcie_rx_bytes_per_second, 2e6);
  EXPECT_DOUBLE_EQ(*g.pcie_tx_bytes_per_second, 1e6);
  EXPECT_DOUBLE_EQ(*g.nvlink_rx_bytes, 4096);
  EXPECT_DOUBLE_EQ(*g.nvlink_tx_bytes, 8192);
  EXPECT_DOUBLE_EQ(*g.ecc_corrected, 3);
  EXPECT_DOUBLE_EQ(*g.ecc_uncorrected, 1);
  EXPECT_EQ(*g.throttle_reasons, 0x24u);
  EXPECT_DOUBLE_EQ(*g.sm_active_ratio, 0.75);
  EXPECT_DOUBLE_EQ(*g.sm_occupancy_ratio, 0.30);
  EXPECT_DOUBLE_EQ(*g.tensor_active_ratio, 0.50);
  EXPECT_DOUBLE_EQ(*g.dram_active_ratio, 0.20);
  EXPECT_TRUE(g.processes_known);
  EXPECT_TRUE(g.processes.empty());
  const GpuSample& h = out.gpus[1];
  EXPECT_DOUBLE_EQ(*h.utilization_ratio, 0.10);
  ASSERT_EQ(h.processes.size(), 2u);
  EXPECT_EQ(h.processes[0].pid, 4242u);
  EXPECT_DOUBLE_EQ(h.processes[0].used_bytes, 2e9);
}

TEST(GpuSampler, NotSupportedIsRecordedLoggedOnceAndNotAskedAgain) {
  FakeNvml fake("gpus 2\npower_mw 100000\ngpu.1.error.power_usage 3\n");
  Logged log;
  GpuSampler s(fake_nvml_path(), log.logger());
  ASSERT_TRUE(s.ok());
  Sample first = s.sample();
  ASSERT_EQ(first.errors.size(), 1u);
  EXPECT_EQ(first.errors[0].gpu, 1);
  EXPECT_EQ(first.errors[0].query, "power_usage");
  EXPECT_EQ(first.errors[0].error, "NOT_SUPPORTED");
  EXPECT_FALSE(first.gpus[1].power_watts.has_value());
  EXPECT_DOUBLE_EQ(*first.gpus[0].power_watts, 100.0);
  Sample second = s.sample();
  EXPECT_TRUE(second.errors.empty());  // not asked again
  EXPECT_EQ(log.count("GPU 1: NVML power_usage failed: NOT_SUPPORTED"), 1);
}

TEST(GpuSampler, LostGpuIsMarkedAndTheOthersStillSampled) {
  FakeNvml fake("gpus 3\nutil 50\n");
  Logged log;
  GpuSampler s(fake_nvml_path(), log.logger());
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s.sample().errors.empty());
  fake.set("gpus 3\nutil 50\ngpu.2.lost 1\n");
  for (int pass = 0; pass < 3; ++pass) {
    Sample out = s.sample();
    EXPECT_TRUE(out.gpus[2].lost);
    EXPECT_FALSE(out.gpus[2].utilization_ratio.has_value());
    EXPECT_FALSE(out.gpus[0].lost);
    EXPECT_DOUBLE_EQ(*out.gpus[1].utilization_ratio, 0.5);
    ASSERT_EQ(out.errors.size(), 1u);  // one failed call per pass, the rest skipped
    EXPECT_EQ(out.errors[0].error, "GPU_IS_LOST");
  }
  EXPECT_EQ(log.count("GPU 2: NVML utilization_rates failed: GPU_IS_LOST"), 1);
  fake.set("gpus 3\nutil 50\n");  // back (e.g. after a reset)
  Sample back = s.sample();
  EXPECT_FALSE(back.gpus[2].lost);
  EXPECT_DOUBLE_EQ(*back.gpus[2].utilization_ratio, 0.5);
}

TEST(GpuSampler, XidEventsAreDeliveredOnce) {
  FakeNvml fake("gpus 2\n");
  Logged log;
  GpuSampler s(fake_nvml_path(), log.logger());
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s.sample().gpus[1].xids.empty());
  fake.set("gpus 2\ngpu.1.xids 79 48\n");
  Sample out = s.sample();
  EXPECT_EQ(out.gpus[1].xids, (std::vector<unsigned long long>{79, 48}));
  EXPECT_TRUE(out.gpus[0].xids.empty());
  EXPECT_TRUE(s.sample().gpus[1].xids.empty());
  EXPECT_EQ(log.count("GPU 1: XID 79 reported"), 1);
}

TEST(GpuSampler, MissingOrWrongLibraryIsAnErrorNotACrash) {
  Logged log;
  GpuSampler missing("/nonexistent/libnvidia-ml.so.1", log.logger());
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("/nonexistent/libnvidia-ml.so.1: cannot load NVML"), std::string::npos);
  EXPECT_TRUE(missing.sample().gpus.empty());
  GpuSampler wrong("libz.so.1", log.logger());  // loads, but is no NVML
  EXPECT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().find("not an NVML library"), std::string::npos);
}

TEST(GpuSampler, InitFailureIsReported) {
  FakeNvml fake("init_error 9\n");
  GpuSampler s(fake_nvml_path(), nullptr);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.error().find("DRIVER_NOT_LOADED"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::monitor
