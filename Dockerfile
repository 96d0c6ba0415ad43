# A gpulint image: docker run --rm -v "$PWD:/src" gpulint
FROM python:3.12-slim
LABEL org.opencontainers.image.title="gpulint" \
      org.opencontainers.image.description="A static linter for the GPU container stack" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/gpulint/gpulint"
COPY . /opt/gpulint
RUN pip install --no-cache-dir /opt/gpulint && rm -rf /opt/gpulint \
    && useradd --create-home --uid 10001 gpulint
USER gpulint
WORKDIR /src
ENTRYPOINT ["gpulint"]
CMD ["."]
