package sqlite

// Tests open databases through database/sql too, as another program would.
import _ "modernc.org/sqlite"
