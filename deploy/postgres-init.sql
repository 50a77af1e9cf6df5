-- Temporal keeps its own databases beside Revops' on the same server.
CREATE DATABASE temporal OWNER revops;
CREATE DATABASE temporal_visibility OWNER revops;
