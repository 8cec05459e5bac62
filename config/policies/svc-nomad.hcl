# svc's Nomad token, in the namespace of its workload jobs (nomadNamespace): nothing more.
namespace "svc" {
  policy       = "read"
  capabilities = ["submit-job", "read-job", "list-jobs", "scale-job", "read-logs"]
  # Workloads' secrets: the Variable nomad/jobs/<job id> of each svc job, which its template renders.
  variables {
    path "nomad/jobs/svc-*" {
      capabilities = ["write", "destroy"]
    }
  }
}
