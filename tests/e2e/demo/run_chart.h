// The demo's picture: the ShardSet's desired, active and retained shards and its total samples/s
// over the run, with the HPA's decisions and the demo's own steps marked, drawn by gnuplot as a
// PNG. It records what it is given and draws it; it never reads the cluster itself.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <expected>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/testenv/child_process.h"

namespace shardscaler::e2e {

class RunChart {
 public:
  enum class MarkKind { HpaDecision, KubectlScale, Load };

  // One observation at `seconds` into the run; `samples_per_second` absent while the ShardSet
  // has no rates.
  void sample(double seconds, int desired, int active, int retained,
              std::optional<double> samples_per_second) {
    std::lock_guard lock(mutex_);
    samples_.push_back({seconds, desired, active, retained, samples_per_second});
  }

  std::size_t samples() const {
    std::lock_guard lock(mutex_);
    return samples_.size();
  }

  void mark(double seconds, MarkKind kind, std::string label) {
    std::lock_guard lock(mutex_);
    marks_.push_back({seconds, kind, std::move(label)});
  }

  // Writes <dir>/<name>.dat and <dir>/<name>.gp and runs gnuplot on them; returns the PNG's
  // absolute path, or why there is none.
  Expected<std::filesystem::path> plot(const std::filesystem::path& dir,
                                       const std::string& name) const {
    std::lock_guard lock(mutex_);
    if (samples_.size() < 2) return std::unexpected("fewer than two observations recorded");
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const auto base = std::filesystem::absolute(dir, ec) / name;
    const auto data = base.string() + ".dat";
    const auto script = base.string() + ".gp";
    const auto png = base.string() + ".png";
    if (!(std::ofstream(data) << dataText()) || !(std::ofstream(script) << scriptText(data, png))) {
      return std::unexpected("cannot write " + data + " or " + script);
    }
    std::filesystem::remove(png, ec);
    const auto gnuplot = testenv::findExecutable("gnuplot");
    if (gnuplot.empty()) return std::unexpected("no gnuplot in PATH (Debian package gnuplot-nox)");
    const auto r = testenv::runCommand({gnuplot.string(), script}, "", std::chrono::seconds(60));
    if (r.exit_code != 0 || !std::filesystem::exists(png)) {
      return std::unexpected("gnuplot " + script + " failed (exit " + std::to_string(r.exit_code) +
                             "): " + r.err);
    }
    return png;
  }

 private:
  struct Sample {
    double seconds;
    int desired;
    int active;
    int retained;
    std::optional<double> samples_per_second;
  };
  struct Mark {
    double seconds;
    MarkKind kind;
    std::string label;
  };

  std::string dataText() const {
    std::string out = "# seconds desired active retained samples_per_second\n";
    char line[128];
    for (const Sample& s : samples_) {
      std::snprintf(line, sizeof line, "%.1f %d %d %d %s\n", s.seconds, s.desired, s.active,
                    s.retained,
                    s.samples_per_second ? std::to_string(*s.samples_per_second).c_str() : "NaN");
      out += line;
    }
    return out;
  }

  static const char* color(MarkKind kind) {
    switch (kind) {
      case MarkKind::HpaDecision:
        return "#c0392b";
      case MarkKind::KubectlScale:
        return "#1f4e9c";
      case MarkKind::Load:
        return "#6b6b6b";
    }
    return "#000000";
  }
  static int dashType(MarkKind kind) { return kind == MarkKind::Load ? 3 : 2; }

  // gnuplot's quoting of a double-quoted string.
  static std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  }

  std::string scriptText(const std::string& data, const std::string& png) const {
    int max_shards = 1;
    double max_samples = 0;
    for (const Sample& s : samples_) {
      max_shards = std::max({max_shards, s.desired, s.active, s.retained});
      max_samples = std::max(max_samples, s.samples_per_second.value_or(0));
    }
    // The x axis starts where the recording does (the control plane's start-up is not shown).
    const double from = std::floor(samples_.front().seconds / 10) * 10;
    const double to = std::ceil(samples_.back().seconds / 10) * 10;
    char buf[512];
    std::string gp =
        "# The shardscaler demo's run: gnuplot this file to redraw it.\n"
        "set terminal pngcairo size 1600,820 enhanced font \"DejaVu Sans,13\"\n"
        "set output " +
        quoted(png) +
        "\n"
        "set title \"shardscaler demo: ShardSet monitoring/main, its shards and its ingestion\" "
        "font \",15\"\n"
        "set xlabel \"time since the demo started (s)\"\n"
        "set ylabel \"shards\"\n"
        "set y2label \"samples/s of the active shards together\"\n"
        "set datafile missing \"NaN\"\n"
        "set border 11\n"
        "set xtics nomirror\n"
        "set ytics 1 nomirror\n"
        "set y2tics nomirror\n"
        "set format y2 \"%.0f\"\n"
        "set grid xtics ytics lc rgb \"#e4e4e4\"\n"
        "set key outside below center horizontal maxrows 2 width 2\n"
        "set bmargin 8\n"
        "set style textbox opaque noborder margins 1,1\n";
    // Room above the highest count for the marks' labels: both curves stay in the lower part.
    std::snprintf(buf, sizeof buf, "set xrange [%.0f:%.0f]\nset yrange [0:%d]\n", from, to,
                  max_shards + 3);
    gp += buf;
    if (max_samples > 0) {
      std::snprintf(buf, sizeof buf, "set y2range [0:%.0f]\n",
                    max_samples * (max_shards + 3) / (max_shards + 0.3));
    } else {
      std::snprintf(buf, sizeof buf, "set y2range [0:*]\n");
    }
    gp += buf;
    // A label is about 28 of the plot's ~1400 pixels wide: one of a mark close after another
    // moves right, so that neither hides the other.
    const double label_width = (to - from) * 28 / 1400;
    double next_label = from;
    std::vector<Mark> marks = marks_;  // recorded from several threads
    std::ranges::stable_sort(marks, {}, &Mark::seconds);
    int n = 0;
    for (const Mark& m : marks) {
      ++n;
      const double label_at = std::max(m.seconds, next_label);
      next_label = label_at + label_width;
      std::snprintf(buf, sizeof buf,
                    "set arrow %d from %.1f, graph 0 to %.1f, graph 1 nohead lw 1.5 dt %d lc rgb "
                    "\"%s\" back\n",
                    n, m.seconds, m.seconds, dashType(m.kind), color(m.kind));
      gp += buf;
      std::snprintf(buf, sizeof buf,
                    "set label %d %s at %.1f, graph 0.985 right rotate by 90 offset -0.9,0 "
                    "font \",11\" tc rgb \"%s\" boxed front\n",
                    n, quoted(m.label).c_str(), label_at, color(m.kind));
      gp += buf;
    }
    gp += "plot " + quoted(data) +
          " using 1:3 with steps lw 7 lc rgb \"#2e8b57\" title \"active shards "
          "(status.shards)\", \\\n"
          "  '' using 1:2 with steps lw 2.5 dt 2 lc rgb \"#111111\" title \"desired shards "
          "(spec.shards)\", \\\n"
          "  '' using 1:4 with steps lw 3 lc rgb \"#e67e22\" title \"retained shards (detached, "
          "kept until their deadline)\", \\\n"
          "  '' using 1:5 axes x1y2 with lines lw 2 lc rgb \"#8e44ad\" title \"samples/s "
          "(right axis)\", \\\n";
    for (MarkKind kind : {MarkKind::HpaDecision, MarkKind::KubectlScale, MarkKind::Load}) {
      static const char* const kTitles[] = {"the HPA's decision (SuccessfulRescale)",
                                            "kubectl scale", "the demo changes the load"};
      std::snprintf(buf, sizeof buf,
                    "  keyentry with lines lw 1.5 dt %d lc rgb \"%s\" title \"%s\"%s\n",
                    dashType(kind), color(kind), kTitles[static_cast<int>(kind)],
                    kind == MarkKind::Load ? "" : ", \\");
      gp += buf;
    }
    return gp;
  }

  mutable std::mutex mutex_;
  std::vector<Sample> samples_;
  std::vector<Mark> marks_;
};

}  // namespace shardscaler::e2e
