package policy_test

// The kinds, as the binary links them: their declared reasons (a refused
// login, a warming service) are the policy's table and words.
import (
	_ "github.com/healthctl/healthctl/internal/grpchealth"
	_ "github.com/healthctl/healthctl/internal/mysqlwire"
	_ "github.com/healthctl/healthctl/internal/pgwire"
	_ "github.com/healthctl/healthctl/internal/rediswire"
)
