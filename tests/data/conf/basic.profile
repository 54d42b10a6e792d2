# A comment line, then a blank line

memory 256M   # trailing comment
hostname "my host"
setenv GREETING "say \"hi\" \\ bye"
	env-keep   A B	C
key "#not a comment" x#comment
glued pre"fix mid"post ""
