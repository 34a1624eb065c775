#include "ctld/loop.hpp"

namespace drover::ctld {

EventLoop::~EventLoop() { stop(); }

void EventLoop::start(Hooks hooks) {
  hooks_ = std::move(hooks);
  thread_ = std::thread([this] { run(); });
}

void EventLoop::post(Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void EventLoop::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable() && !on_loop_thread()) thread_.join();
}

void EventLoop::run() {
  auto next_tick = std::chrono::steady_clock::now() + hooks_.tick;
  for (;;) {
    std::deque<Task> batch;
    bool stopping = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_until(lock, next_tick, [&] { return !queue_.empty() || stopping_; });
      batch.swap(queue_);
      stopping = stopping_;
    }
    for (auto& task : batch) task();
    if (!batch.empty() && hooks_.after_batch) hooks_.after_batch();
    if (stopping) return;
    if (std::chrono::steady_clock::now() >= next_tick) {
      if (hooks_.on_tick) hooks_.on_tick();
      next_tick = std::chrono::steady_clock::now() + hooks_.tick;
    }
  }
}

}  // namespace drover::ctld
