# svc's Nomad token, in the namespace of its workload jobs (nomadNamespace): nothing more.
namespace "svc" {
  policy       = "read"
  # alloc-exec: `svc container exec` and `svc shell` (owners of a workspace) run commands in svc's allocations;
  # alloc-node-exec is what Nomad asks for that on drivers without isolation (raw_exec): drop it where svc runs `exec`.
  capabilities = [
    "submit-job", "read-job", "list-jobs", "scale-job", "read-logs", "host-volume-register", "host-volume-read",
    "alloc-exec", "alloc-node-exec",
    # With nomadCsiPlugin: svc's volumes are CSI volumes svc creates and deletes with the plugin, mounted by its jobs.
    "csi-write-volume", "csi-read-volume", "csi-list-volume", "csi-mount-volume",
  ]
  # Workloads' secrets: the Variable nomad/jobs/<job id> of each svc job, which its template renders
  # (and the token of each CSI volume's keeper, job svc--volume--<workspace>--<volume>).
  variables {
    path "nomad/jobs/svc-*" {
      capabilities = ["write", "destroy"]
    }
    # The keepers' tokens, which every svc replica reads back to reach a keeper another one started.
    path "nomad/jobs/svc--volume--*" {
      capabilities = ["read", "write", "destroy"]
    }
  }
}

# svc's volumes: registered as the host volumes svc-<workspace>--<volume> on the nodes of
# nomadVolumeNodes (found by name), and mounted by the jobs of the workloads that name them.
host_volume "svc-*" {
  policy = "write"
}
node {
  policy = "read"
}
# With nomadCsiPlugin: svc reads the plugin's health when a CSI volume cannot be created.
plugin {
  policy = "read"
}
