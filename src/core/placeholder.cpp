// placeholder: the scheduling core lands here.
namespace drover::core { int core_placeholder() { return 0; } }
