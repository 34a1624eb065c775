// placeholder: the simulator lands here.
namespace drover::sim { int sim_placeholder() { return 0; } }
