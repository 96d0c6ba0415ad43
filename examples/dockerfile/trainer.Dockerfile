# A training image built on CUDA 12.8 that ships on CUDA 11.8 and pulls CUDA 11 wheels.
FROM nvidia/cuda:12.8.1-devel-ubuntu22.04 AS ext
COPY csrc/ /csrc
RUN nvcc -shared -Xcompiler -fPIC -o /csrc/libfused.so /csrc/fused.cu

FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip \
 && pip install --no-cache-dir cupy-cuda12x torch==2.1.2+cu121 --index-url https://download.pytorch.org/whl/cu121
COPY --from=ext /csrc/libfused.so /usr/local/lib/
RUN python3 -c "import torch; assert torch.cuda.is_available()"
CMD ["python3", "-m", "trainer"]
