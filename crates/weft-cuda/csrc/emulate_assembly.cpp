// kernels/weft_assembly.cu executed serially on the host (see
// host_cuda_emulation.hpp); the kernels keep their extern "C" names.
#include "host_cuda_emulation.hpp"
#include "../../../kernels/weft_assembly.cu"

extern "C" void weft_emu_assembly_block(unsigned block, unsigned grid) {
    blockIdx.x = block;
    gridDim.x = grid;
    blockDim.x = 1;
    threadIdx.x = 0;
}
