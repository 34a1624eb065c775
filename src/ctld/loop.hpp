// The controller's one state thread: tasks posted from any thread run here
// in order; between batches of tasks the loop runs its idle hook (a quick
// scheduling pass when something changed) and, once per tick, its timer hook.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace drover::ctld {

class EventLoop {
 public:
  using Task = std::function<void()>;
  struct Hooks {
    std::function<void()> after_batch;  // after the queued tasks ran
    std::function<void()> on_tick;      // every `tick`
    std::chrono::milliseconds tick{200};
  };

  EventLoop() = default;
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  void start(Hooks hooks);
  // Thread-safe. Tasks posted after stop() are dropped.
  void post(Task task);
  // Runs the tasks already queued, then stops and joins.
  void stop();
  bool on_loop_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

 private:
  void run();

  Hooks hooks_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace drover::ctld
