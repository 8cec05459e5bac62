# The Consul agent's own token (acl.tokens.agent, or `consul acl set-agent-token agent <secret>`):
# it registers its node and syncs the services agents register to the catalog. Without one,
# a deregistration is answered 200 but blocked at the sync, and the instance stays listed.
# Narrow it to `node "<this node's name>"` on a real cluster.
node_prefix ""    { policy = "write" }
service_prefix "" { policy = "read" }
