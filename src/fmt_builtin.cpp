// fmt's compiled functions (format-inl.h, the part of libfmt that is not a
// template), built into the executables that start often (drover-cli, a
// command per call; drover-stepd, one per job step). With them they need no
// libfmt.so, and so no shared libstdc++ either: the dynamic loader maps and
// relocates only libc and libm, which is a large part of their start-up.
// `--as-needed` then drops the -lfmt that the libraries bring.
#include <fmt/format.h>
#include <fmt/format-inl.h>

// The two templates format.h declares extern for char.
FMT_BEGIN_NAMESPACE
namespace detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
}  // namespace detail
FMT_END_NAMESPACE
