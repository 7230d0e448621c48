"""The simulated world the agent acts on: GPU hosts, the Hugging Face Hub, SGLang.

It is an environment, not a mock: the real tools run the real commands against
it. `profiles/` says what a host is; `world/` lays a host out as a directory
tree; `host/` holds the executables on its PATH; `hub/` is the Hub emulator;
`serving/` is the SGLang serving simulator.
"""
