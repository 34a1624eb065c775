// A shared library loaded at run time (dlopen), closed with the object: how
// detection reaches the NVIDIA libraries (libnvidia-ml, libcuda) without a
// link dependency on them.
#pragma once

#include <dlfcn.h>

#include <string>

namespace drover::agent::hw {

class DlLibrary {
 public:
  explicit DlLibrary(const std::string& path) : handle_(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~DlLibrary() {
    if (handle_) dlclose(handle_);
  }
  DlLibrary(const DlLibrary&) = delete;
  DlLibrary& operator=(const DlLibrary&) = delete;

  bool opened() const { return handle_ != nullptr; }

  // The entry point `name` as a function pointer of type Fn; null if the
  // library was not loaded or lacks it (optional entry points stay null).
  template <class Fn>
  Fn sym(const char* name) const {
    return handle_ ? reinterpret_cast<Fn>(dlsym(handle_, name)) : nullptr;
  }

 private:
  void* handle_;
};

}  // namespace drover::agent::hw
