package main

import rootcmd "github.com/healthctl/healthctl/internal/cmd/root"

// newRoot is the command tree the tests inspect (flags, help, the docs'
// commands).
var newRoot = rootcmd.New
