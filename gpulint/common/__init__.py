"""Facts several kinds\x27 checks share: the runtimes a node has, image tag findings,
what a container's GPU settings mean. Nothing here reads another kind's files: checks get
the cross-file facts they need from the Context (`ctx.fact(...)`)."""
