# The Nomad agent's Consul token: registers every allocation's services and their checks.
agent_prefix ""   { policy = "read" }
node_prefix ""    { policy = "read" }
service_prefix "" { policy = "write" }
