// Binds a USER profile to the OpenID Connect subject (`sub`) that first signed
// in with its email, so a later token carrying the same email for another
// identity (an email changed at the issuer) cannot take the profile over.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ProfileOidcSubject1763805600000 implements MigrationInterface {
  name = 'ProfileOidcSubject1763805600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE profiles ADD COLUMN oidc_subject text');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE profiles DROP COLUMN oidc_subject');
  }
}
