package probe

import (
	"context"

	"github.com/healthctl/healthctl/internal/amqpwire"
	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/dnswire"
	"github.com/healthctl/healthctl/internal/grpchealth"
	"github.com/healthctl/healthctl/internal/icmpwire"
	"github.com/healthctl/healthctl/internal/mysqlwire"
	"github.com/healthctl/healthctl/internal/pgwire"
	"github.com/healthctl/healthctl/internal/probe/dbprobe"
	"github.com/healthctl/healthctl/internal/probe/grpcprobe"
	"github.com/healthctl/healthctl/internal/probe/httpprobe"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/probe/streamprobe"
	"github.com/healthctl/healthctl/internal/rediswire"
	"github.com/healthctl/healthctl/internal/scheme"
)

// exchange makes the exchange that speaks a row's protocol.
type exchange = func(ctx context.Context, p *session.Probe) (session.Exchange, error)

// exchanges are the table's exchanges by the kind a row names (scheme.Scheme's
// Kind: what its exchange answers), HTTP's rows, which name none, aside. The
// table is pure data (internal/scheme); this map is where a row meets its
// exchange file without naming a scheme, a row's aliases and its TLS twin
// with it, and every row has one (TestEveryRowHasAnExchange).
var exchanges = map[*classify.Kind]exchange{
	grpchealth.Kind:   grpcprobe.New,
	scheme.StreamKind: streamprobe.NewStream,
	rediswire.Kind:    dbprobe.NewRedis,
	pgwire.Kind:       dbprobe.NewPostgres,
	dnswire.Kind:      streamprobe.NewDNS,
	amqpwire.Kind:     dbprobe.NewAMQP,
	mysqlwire.Kind:    dbprobe.NewMySQL,
	icmpwire.Kind:     streamprobe.NewICMP,
}

// rowExchange is the exchange of a row: its kind's, HTTP's for a row
// without one.
func rowExchange(row scheme.Scheme) exchange {
	if row.Kind == nil {
		return httpprobe.New
	}
	return exchanges[row.Kind]
}

// exchangeFor is the exchange of a URL scheme (its row of the scheme
// table), nil for a scheme no protocol speaks.
func exchangeFor(name string) exchange {
	if row, ok := scheme.LookupScheme(name); ok {
		return rowExchange(row)
	}
	return nil
}
