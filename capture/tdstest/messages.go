package tdstest

import "fmt"

// ErrNoPlanHints is error 8622: the query processor could not produce a plan
// because of the hints in the query (e.g. an index hint on a filtered index
// under forced parameterization).
func ErrNoPlanHints() Message {
	return Message{Number: 8622, State: 1, Class: 16, Line: 1,
		Text: "Query processor could not produce a query plan because of the hints defined in this query. Resubmit the query without specifying any hints and without using SET FORCEPLAN."}
}

// ErrShowplanDenied is error 262: SHOWPLAN permission denied in database db.
func ErrShowplanDenied(db string) Message {
	return Message{Number: 262, State: 4, Class: 14, Line: 1,
		Text: fmt.Sprintf("SHOWPLAN permission denied in database '%s'.", db)}
}

// ErrInvalidObject is error 208: invalid object name.
func ErrInvalidObject(name string) Message {
	return Message{Number: 208, State: 1, Class: 16, Line: 1,
		Text: fmt.Sprintf("Invalid object name '%s'.", name)}
}

// ErrLoginFailed is error 18456: login failed for user.
func ErrLoginFailed(user string) Message {
	return Message{Number: 18456, State: 1, Class: 14,
		Text: fmt.Sprintf("Login failed for user '%s'.", user)}
}

// ErrShowplanNotAlone is error 1067: SET SHOWPLAN must be alone in its batch.
func ErrShowplanNotAlone() Message {
	return Message{Number: 1067, State: 1, Class: 15, Line: 1,
		Text: "The SET SHOWPLAN statements must be the only statements in the batch."}
}

func errNoBeginCommit() Message {
	return Message{Number: 3902, State: 1, Class: 16, Line: 1,
		Text: "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION."}
}

func errNoBeginRollback() Message {
	return Message{Number: 3903, State: 1, Class: 16, Line: 1,
		Text: "The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION."}
}

func errNoDatabase(db string) Message {
	return Message{Number: 911, State: 1, Class: 16, Line: 1,
		Text: fmt.Sprintf("Database '%s' does not exist. Make sure that the name is entered correctly.", db)}
}

func errCannotOpenDatabase(db string) Message {
	return Message{Number: 4060, State: 1, Class: 11,
		Text: fmt.Sprintf("Cannot open database \"%s\" requested by the login. The login failed.", db)}
}

// UnhandledNumber is the error number sent for requests no handler answered.
const UnhandledNumber = 50000

func errUnhandled(what string) Message {
	return Message{Number: UnhandledNumber, State: 1, Class: 16,
		Text: "tdstest: no response configured for " + what}
}

func errBadResponse(err error) Message {
	return Message{Number: UnhandledNumber, State: 2, Class: 16,
		Text: "tdstest: invalid response: " + err.Error()}
}

func changedDatabase(db string) Message {
	return Message{Number: 5701, State: 2, Class: 0, Line: 1,
		Text: fmt.Sprintf("Changed database context to '%s'.", db)}
}

func changedLanguage() Message {
	return Message{Number: 5703, State: 1, Class: 0, Line: 1, Text: "Changed language setting to us_english."}
}

// errParamType is error 214, raised by sp_executesql for a statement or
// declaration that is not ntext, nchar or nvarchar.
func errParamType(name string) Message {
	return Message{Number: 214, State: 2, Class: 16, Proc: "sp_executesql", Line: 1,
		Text: fmt.Sprintf("Procedure expects parameter '%s' of type 'ntext/nchar/nvarchar'.", name)}
}

// errShowplanNotEmulated refuses SET SHOWPLAN_ALL / SHOWPLAN_TEXT ON: this
// server returns XML plans only. The request is recorded as unhandled.
func errShowplanNotEmulated(option string) Message {
	return Message{Number: UnhandledNumber, State: 3, Class: 16, Line: 1,
		Text: fmt.Sprintf("tdstest: SET %s ON is not emulated; only SET SHOWPLAN_XML returns plans here", option)}
}
