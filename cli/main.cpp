// scalecast: predict how fast deep-learning training runs on GPU supercomputers.

#include "cli/commands.hpp"

int main(int argc, char** argv) { return scalecast::cli::run_main(argc, argv); }
