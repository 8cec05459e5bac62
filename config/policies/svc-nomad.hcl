# svc's Nomad token, in the namespace of its workload jobs (nomadNamespace): nothing more.
namespace "svc" {
  policy       = "read"
  capabilities = ["submit-job", "read-job", "list-jobs", "scale-job", "read-logs"]
}
