package classify

import (
	"errors"
	"fmt"
	"strings"
)

// The exchanges of the services CI jobs wait for before the application:
// Redis and PostgreSQL (SPEC §13).
const (
	// ProtoRedis is one PING (after AUTH and SELECT when the URL asks).
	ProtoRedis Protocol = "redis"
	// ProtoPostgres is a startup message, as pg_isready sends.
	ProtoPostgres Protocol = "postgres"
)

// The reasons of a Redis or PostgreSQL answer. All are unreachable; the
// policy treats the warming ones (Warming) as it treats a timeout.
const (
	// RedisLoading is -LOADING: the server is loading its dataset.
	RedisLoading Reason = "redis_loading"
	// RedisMasterDown is -MASTERDOWN: a replica that lost its master
	// and serves no stale data.
	RedisMasterDown Reason = "redis_masterdown"
	// RedisBusy is -BUSY: a script or function runs past its time limit.
	RedisBusy Reason = "redis_busy"
	// RedisAuth is -NOAUTH or -WRONGPASS: credentials are needed, or the
	// ones given were refused (any error to AUTH: a later PING may pass
	// as the default user, which the URL did not ask for).
	RedisAuth Reason = "redis_auth"
	// RedisClusterDown is a cluster-mode server whose CLUSTER INFO says
	// cluster_state:fail: PING answers, every key command -CLUSTERDOWN.
	RedisClusterDown Reason = "redis_cluster_down"
	// RedisError is any other error reply (and a Sentinel's port, which
	// serves no keys).
	RedisError Reason = "redis_error"
	// RedisProtocol is an answer that is not RESP (another protocol on
	// the port), or a connection closed without a reply.
	RedisProtocol Reason = "redis_protocol"

	// PostgresStartingUp is 57P03 "the database system is starting up".
	PostgresStartingUp Reason = "postgres_starting_up"
	// PostgresShuttingDown is 57P03 "the database system is shutting down".
	PostgresShuttingDown Reason = "postgres_shutting_down"
	// PostgresRecovery is any other 57P03: in recovery, not yet
	// consistent, a standby with hot_standby off.
	PostgresRecovery Reason = "postgres_recovery"
	// PostgresTooManyConnections is 53300: no connection slot left.
	PostgresTooManyConnections Reason = "postgres_too_many_connections"
	// PostgresAuth is 28P01 or 28000 to a login with the URL's password:
	// wrong password, no such role, pg_hba.conf refused it.
	PostgresAuth Reason = "postgres_auth"
	// PostgresReadOnly is a login whose session is read-only (a hot
	// standby) where the URL's target_session_attrs=read-write asked for
	// one that is not.
	PostgresReadOnly Reason = "postgres_read_only"
	// PostgresDatabase is 3D000: the URL's database does not exist.
	PostgresDatabase Reason = "postgres_database"
	// PostgresError is any other ErrorResponse to the startup message.
	PostgresError Reason = "postgres_error"
	// PostgresProtocol is an answer that is not PostgreSQL's.
	PostgresProtocol Reason = "postgres_protocol"
)

// Warming says r is a service in a passing state that a redeploy would
// only start over or cannot cure: Redis loading its data set or held busy
// by a script, a replica waiting for its master, PostgreSQL starting up,
// replaying its log, or shutting down (57P03). The policy ignores it as it
// ignores a timeout.
func Warming(r Reason) bool {
	switch r {
	case RedisLoading, RedisBusy, RedisMasterDown, PostgresStartingUp, PostgresRecovery, PostgresShuttingDown:
		return true
	}
	return false
}

// RedisAnswer is what a Redis probe read: the PING's reply and the replies
// before it (AUTH, SELECT), each its type byte and text.
type RedisAnswer struct {
	// NotRESP: what came was not RESP at all.
	NotRESP bool
	// Ping is the PING's reply ("+PONG", "-LOADING …"); Before are the
	// replies to AUTH and SELECT, in order, with the command each answers.
	Ping   string
	Before []RedisReply
	// Mode is INFO server's redis_mode when it is not standalone
	// ("sentinel", "cluster"); ClusterState and ClusterSlotsOK are
	// CLUSTER INFO's on a cluster-mode server ("" elsewhere).
	Mode           string
	ClusterState   string
	ClusterSlotsOK string
}

// RedisReply is one reply to a command sent before PING.
type RedisReply struct {
	Command string
	Reply   string
}

func redisReason(a *RedisAnswer) Reason {
	if a == nil || a.NotRESP {
		return RedisProtocol
	}
	if a.Mode == "sentinel" {
		// A Sentinel answers PING but serves no key.
		return RedisError
	}
	for _, b := range a.Before {
		// A refused AUTH leaves the connection the default user's: a
		// later PING may pass, but the URL's credentials did not.
		if r, ok := redisError(b.Reply); ok && b.Command == "AUTH" && !unneededPassword(b.Reply) {
			if Warming(r) {
				return r
			}
			return RedisAuth
		}
	}
	if r, ok := redisError(a.Ping); ok {
		return r
	}
	for _, b := range a.Before {
		if r, ok := redisError(b.Reply); ok && b.Command == "SELECT" {
			// The database asked for does not exist (or this user may
			// not use it): PING alone does not say that.
			return r
		}
	}
	if a.Ping != "+PONG" {
		return RedisProtocol
	}
	if a.ClusterState != "" && a.ClusterState != "ok" {
		return RedisClusterDown
	}
	return OK
}

// unneededPassword is the error a server whose default user has no
// password answers to AUTH with a password alone: nothing was refused, the
// connection is the user the URL named (redis-cli -a and ioredis go on, a
// warning said).
func unneededPassword(reply string) bool {
	return strings.HasPrefix(reply, "-ERR AUTH <password> called without any password configured") ||
		// Redis before 6 said it so.
		strings.HasPrefix(reply, "-ERR Client sent AUTH, but no password is set")
}

// redisError names an error reply by its first word.
func redisError(reply string) (Reason, bool) {
	if !strings.HasPrefix(reply, "-") {
		return "", false
	}
	code, _, _ := strings.Cut(reply[1:], " ")
	switch code {
	case "LOADING":
		return RedisLoading, true
	case "MASTERDOWN":
		return RedisMasterDown, true
	case "BUSY":
		return RedisBusy, true
	case "NOAUTH", "WRONGPASS":
		return RedisAuth, true
	}
	if strings.HasPrefix(reply, "-ERR invalid password") {
		// Redis before 6 refuses a wrong password so.
		return RedisAuth, true
	}
	return RedisError, true
}

// orNone is s, or "none" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// PostgresAnswer is what a PostgreSQL probe read in answer to its startup
// message.
type PostgresAnswer struct {
	// NotPostgres: the answer was not a PostgreSQL message.
	NotPostgres bool
	// Auth: the server asked for authentication (or said it was done):
	// it accepts connections.
	Auth bool
	// Code is an ErrorResponse's SQLSTATE, Message its message.
	Code    string
	Message string
	// Login: the probe logged in with the URL's password (psql's
	// question, not pg_isready's); LoggedIn: it did, and an empty query
	// was answered.
	Login, LoggedIn bool
	// ReadOnly: logged in, the session read-only, read-write asked for.
	ReadOnly bool
}

// ErrPostgresNoSSL is a PostgreSQL server that answered N to the SSLRequest
// of sslmode=require: it does not speak TLS there.
var ErrPostgresNoSSL = errors.New("the server does not support SSL, but sslmode=require asked for it")

func postgresReason(a *PostgresAnswer) Reason {
	switch {
	case a == nil || a.NotPostgres:
		return PostgresProtocol
	case a.ReadOnly:
		return PostgresReadOnly
	case a.Auth:
		return OK
	case a.Code == "57P03":
		// One SQLSTATE for every "cannot connect now"; the message
		// tells them apart (PostgreSQL's own, in English: lc_messages
		// of the postmaster, which logs in English by default).
		switch {
		case strings.Contains(a.Message, "starting up"):
			return PostgresStartingUp
		case strings.Contains(a.Message, "shutting down"):
			return PostgresShuttingDown
		}
		return PostgresRecovery
	case a.Code == "53300":
		return PostgresTooManyConnections
	case a.Code == "3D000":
		return PostgresDatabase
	case strings.HasPrefix(a.Code, "28") && a.Login:
		// The application's credentials were refused.
		return PostgresAuth
	case a.Code == "08P01" && a.Login && strings.Contains(a.Message, "authentication failed"):
		// PgBouncer refuses a client's password with 08P01 ("SASL
		// authentication failed"), not 28P01.
		return PostgresAuth
	case strings.HasPrefix(a.Code, "28"):
		// invalid authorization: the server got as far as
		// authenticating (pg_hba.conf refused, no such role, a password
		// needed): it accepts connections, as pg_isready says.
		return OK
	}
	return PostgresError
}

// kindReason is the reason of a Redis or PostgreSQL probe whose exchange
// read an answer (Err nil); ok is false for other protocols.
func kindReason(o Observation) (Reason, bool) {
	switch o.Protocol {
	case ProtoRedis:
		return redisReason(o.Redis), true
	case ProtoPostgres:
		return postgresReason(o.Postgres), true
	}
	return "", false
}

// kindProtocolError is the reason of a Redis or PostgreSQL exchange that
// ended without a whole answer after connecting (closed, garbage): the port
// does not speak the protocol.
func kindProtocolError(p Protocol) (Reason, bool) {
	switch p {
	case ProtoRedis:
		return RedisProtocol, true
	case ProtoPostgres:
		return PostgresProtocol, true
	}
	return "", false
}

func isKindReason(r Reason) bool {
	switch r {
	case RedisLoading, RedisMasterDown, RedisBusy, RedisAuth, RedisClusterDown, RedisError, RedisProtocol,
		PostgresStartingUp, PostgresShuttingDown, PostgresRecovery, PostgresTooManyConnections, PostgresAuth, PostgresDatabase, PostgresReadOnly, PostgresError, PostgresProtocol:
		return true
	}
	return false
}

// kindText says what a Redis or PostgreSQL answer that did not pass was,
// quoting what the server said (Seen: its words, or the bytes that were
// not the protocol).
func kindText(o Observation, r Reason, f Facts) string {
	switch {
	case r == RedisProtocol && f.Seen != "":
		return "not Redis: the server sent " + f.Seen
	case r == RedisProtocol && o.Err != nil:
		return "not Redis: " + ErrorText(o.Err)
	case r == RedisProtocol:
		return "not a Redis answer to PING: " + f.Seen
	case r == RedisClusterDown:
		return fmt.Sprintf("the Redis cluster is down: CLUSTER INFO says cluster_state:%s (%s of 16384 hash slots ok); PING answers, key commands get -CLUSTERDOWN", o.Redis.ClusterState, orNone(o.Redis.ClusterSlotsOK))
	case o.Protocol == ProtoRedis && o.Redis != nil && o.Redis.Mode == "sentinel":
		return "a Redis Sentinel answered (INFO server: redis_mode:sentinel), not a Redis server: it serves no keys; a client asks it for the master's address"
	case o.Protocol == ProtoRedis && o.Redis != nil:
		cmd, reply := "PING", o.Redis.Ping
		for _, b := range o.Redis.Before {
			// A refused AUTH says more than the NOAUTH that follows
			// it; a refused SELECT is the reason when PING answered.
			if strings.HasPrefix(b.Reply, "-") && (r == RedisAuth && b.Command == "AUTH" || !strings.HasPrefix(reply, "-")) {
				cmd, reply = b.Command, b.Reply
				break
			}
		}
		return fmt.Sprintf("Redis answered %s with %q", cmd, reply)
	case r == PostgresProtocol && f.Seen != "":
		return "not PostgreSQL: the server sent " + f.Seen
	case r == PostgresProtocol && o.Err != nil:
		return "not PostgreSQL: " + ErrorText(o.Err)
	case r == PostgresReadOnly:
		return "PostgreSQL logged in, but the session is read-only (a hot standby, or default_transaction_read_only), and the URL's target_session_attrs=read-write asks for one that is not"
	case o.Protocol == ProtoPostgres && o.Postgres != nil:
		return fmt.Sprintf("PostgreSQL refused the connection: %q (SQLSTATE %s)", o.Postgres.Message, o.Postgres.Code)
	}
	return ""
}
